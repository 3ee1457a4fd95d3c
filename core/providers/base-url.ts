/** Joins a provider base URL and a path without doubling or dropping slashes. */
export function joinUrl(base: string, path: string): string {
  const b = base.endsWith('/') ? base.slice(0, -1) : base;
  return path.startsWith('/') ? b + path : `${b}/${path}`;
}
