/**
 * `TZ` named after the zone the system uses: local time stays the same for JavaScript and for SQLite,
 * and glibc stops re-reading /etc/localtime (a stat per localtime()) on the audit thread.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { pinTimeZone } from '../../core/gateway/pin-time-zone.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('pinTimeZone', () => {
  it('leaves a TZ the user set alone', () => {
    const env: NodeJS.ProcessEnv = { TZ: 'Asia/Kolkata' };
    expect(pinTimeZone(env)).toBeNull();
    expect(env.TZ).toBe('Asia/Kolkata');
  });

  it.runIf(process.platform === 'linux')('names the zone JavaScript already uses when TZ is unset', () => {
    const env: NodeJS.ProcessEnv = {};
    expect(pinTimeZone(env)).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
    expect(env.TZ).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
  });

  it.runIf(process.platform === 'linux')('keeps local time the same for JavaScript and SQLite once pinned', () => {
    // A process started without TZ, as a laptop's gateway is: before and after pinning, JavaScript and
    // SQLite's 'localtime' give the same local hours (summer and winter) and the zone keeps its name.
    const script = `
      import { pinTimeZone } from ${JSON.stringify(path.join(root, 'core/gateway/pin-time-zone.ts'))};
      import BetterSqlite3 from 'better-sqlite3';
      const db = new BetterSqlite3(':memory:');
      const instants = [Date.UTC(2025, 0, 15, 12, 30), Date.UTC(2025, 6, 15, 12, 30)];
      const read = () => ({
        zone: Intl.DateTimeFormat().resolvedOptions().timeZone,
        js: instants.map((t) => new Date(t).getHours()),
        sqlite: instants.map((t) => Number(db.prepare("SELECT strftime('%H', ? / 1000, 'unixepoch', 'localtime') AS h").get(t).h)),
      });
      const before = read();
      const pinned = pinTimeZone();
      console.log(JSON.stringify({ before, after: read(), pinned, tz: process.env.TZ }));
    `;
    const env = { ...process.env };
    delete env.TZ;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, env, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { before: { zone: string; js: number[]; sqlite: number[] }; after: typeof out.before; pinned: string | null; tz: string };
    expect(out.pinned).toBe(out.before.zone);
    expect(out.tz).toBe(out.before.zone);
    expect(out.after).toEqual(out.before);
    expect(out.after.sqlite).toEqual(out.after.js);
  });
});
