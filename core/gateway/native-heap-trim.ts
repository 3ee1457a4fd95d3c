/**
 * Gives the C library's free memory back to the OS: glibc's `malloc_trim(0)`, called through koffi (an FFI with
 * prebuilt binaries in the registry, an optional dependency), loaded on first use.
 *
 * Why: a load of large prompts leaves native memory no collection can return. Node mallocs the bytes of every
 * body chunk the HTTP parser reads (32-64 KiB each at a 100 KB prompt), of every body it joins and of every
 * large string it decodes (64-128 KiB); the collector frees them in an order that leaves the main arena's free
 * space in its middle, and glibc gives back only its top. Measured after 10 s of 100 KB prompts: 375 MiB
 * resident for good, 172 MiB of it the main arena; one `malloc_trim(0)` took it to 141 MiB (arena 7 MiB).
 * Asking glibc to map such buffers on their own instead (`mmap_threshold`) returned them as well but doubled
 * the CPU of a 100 KB call (a page fault for every 4 KiB of every buffer).
 *
 * Elsewhere (macOS, Windows, musl, koffi not installed) there is nothing to call and it does nothing.
 */

/** `malloc_trim(pad)`: 1 when memory was released, 0 when there was none to release. */
type MallocTrim = (pad: number) => number;

let loading: Promise<MallocTrim | null> | undefined;

async function loadMallocTrim(): Promise<MallocTrim | null> {
  if (process.platform !== 'linux') return null;
  try {
    const { default: koffi } = await import('koffi');
    // Throws on a C library without the function (musl's has another file name, and no malloc_trim).
    const trim = koffi.load('libc.so.6').func('int malloc_trim(size_t pad)');
    return (pad) => Number(trim(pad));
  } catch {
    return null;
  }
}

/**
 * Returns the free pages of every malloc arena to the OS. Resolves to whether any were released, or to null
 * where it cannot be done. Takes milliseconds on a large arena (it walks the free lists): call it when idle.
 */
export async function trimNativeHeap(): Promise<boolean | null> {
  loading ??= loadMallocTrim();
  const trim = await loading;
  return trim === null ? null : trim(0) === 1;
}
