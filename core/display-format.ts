/** Money and waiting times as the terminal dashboard and the tray show them (plain text, no colours). */

/** Dollars for humans: cents for big amounts, three significant digits for tiny ones, never exponent notation. */
export function money(usd: number | null | undefined): string {
  if (usd === null || usd === undefined || !Number.isFinite(usd)) return '-';
  if (usd === 0) return '$0.00';
  const abs = Math.abs(usd);
  const decimals = abs >= 1 ? 2 : Math.min(10, Math.max(2, 2 - Math.floor(Math.log10(abs))));
  let s = abs.toFixed(decimals);
  // Drop trailing zeros past the cents ("0.000260" → "0.00026"), keep "1.50".
  if (decimals > 2) {
    s = s.replace(/0+$/, '');
    const cents = s.length - s.indexOf('.') - 1;
    if (cents < 2) s += '0'.repeat(2 - cents);
  }
  return `${usd < 0 ? '-' : ''}$${s}`;
}

/** "in 12s", "in 3m05s", "now" — for the next circuit-breaker probe. */
export function until(atMs: number | null, nowMs: number): string {
  if (atMs === null) return '';
  const d = atMs - nowMs;
  if (d <= 0) return 'now';
  const s = Math.ceil(d / 1000);
  return s < 60 ? `in ${s}s` : `in ${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}
