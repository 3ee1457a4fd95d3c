/**
 * URLs joined once per base and path: the same string object comes back on every call, so the transport's
 * per-URL cache finds it by identity instead of hashing and comparing a freshly joined URL each time.
 * Bases come from the configuration (a handful); the cache is emptied should it ever hold more.
 */
const joined = new Map<string, Map<string, string>>();
const MAX_BASES = 256;

/** Joins a provider base URL and a path without doubling or dropping slashes. */
export function joinUrl(base: string, path: string): string {
  let paths = joined.get(base);
  if (paths === undefined) {
    if (joined.size >= MAX_BASES) joined.clear();
    paths = new Map();
    joined.set(base, paths);
  }
  let url = paths.get(path);
  if (url === undefined) {
    const b = base.endsWith('/') ? base.slice(0, -1) : base;
    url = path.startsWith('/') ? b + path : `${b}/${path}`;
    // Paths can carry a client's query string (pass-through): keep the cache to the few fixed ones.
    if (paths.size < MAX_BASES) paths.set(path, url);
  }
  return url;
}
