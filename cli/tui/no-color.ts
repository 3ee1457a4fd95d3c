/**
 * NO_COLOR (https://no-color.org): when set to anything but the empty string, the dashboard writes no
 * colour or style escape codes at all. Ink's chalk does not read NO_COLOR itself but does read
 * FORCE_COLOR=0, once, when it is first imported: so this runs before Ink is loaded.
 */
export function honourNoColor(env: NodeJS.ProcessEnv = process.env): boolean {
  const off = env.NO_COLOR !== undefined && env.NO_COLOR !== '';
  if (off) env.FORCE_COLOR = '0';
  return off;
}
