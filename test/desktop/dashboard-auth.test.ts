/**
 * The dashboard window's admin token: added as a header to the gateway's own `/admin/*` requests only,
 * replacing whatever the page sent, and never to another origin (port, host or scheme), to `/v1`, or
 * to a look-alike path. (tray-model.test.ts shows the same headers opening a real admin API.)
 */
import { describe, expect, it } from 'vitest';
import { isAdminRequest, staysInDashboard, withAdminToken } from '../../desktop/src/dashboard-auth.ts';

const gw = { url: 'http://127.0.0.1:4141', adminToken: 'gwadm-secret' };

describe('dashboard admin-token injection', () => {
  it('adds the token to the gateway’s admin API, and replaces one the page sent', () => {
    expect(withAdminToken('http://127.0.0.1:4141/admin/snapshot?recent=5', { Accept: 'application/json' }, gw)).toEqual({ Accept: 'application/json', Authorization: 'Bearer gwadm-secret' });
    expect(withAdminToken('http://127.0.0.1:4141/admin/events', { authorization: 'Bearer stale' }, gw)).toEqual({ Authorization: 'Bearer gwadm-secret' });
    expect(isAdminRequest('http://127.0.0.1:4141/admin', gw.url)).toBe(true);
  });

  it('leaves every other request alone', () => {
    const h = { Accept: '*/*' };
    for (const url of [
      'http://127.0.0.1:4141/v1/models',
      'http://127.0.0.1:4141/ui/app.js',
      'http://127.0.0.1:4141/administrator',
      'http://127.0.0.1:4141/admin/../v1/models',
      'http://127.0.0.1:4142/admin/snapshot',
      'http://localhost:4141/admin/snapshot',
      'https://127.0.0.1:4141/admin/snapshot',
      'http://127.0.0.1:4141.evil.example/admin/snapshot',
      'http://evil.example/admin/snapshot?u=http://127.0.0.1:4141',
      'not a url',
    ]) {
      expect(withAdminToken(url, h, gw), url).toBe(h);
    }
    expect(withAdminToken('http://127.0.0.1:4141/admin/snapshot', h, null)).toBe(h);
  });

  it('keeps the window on the gateway’s origin', () => {
    expect(staysInDashboard('http://127.0.0.1:4141/ui/logs', gw.url)).toBe(true);
    expect(staysInDashboard('https://platform.openai.com/usage', gw.url)).toBe(false);
    expect(staysInDashboard('http://127.0.0.1:9999/ui', gw.url)).toBe(false);
  });
});
