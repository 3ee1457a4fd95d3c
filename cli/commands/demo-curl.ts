/**
 * The `curl` that `gateway start --demo` prints: it must work as pasted. The first run knows the key it
 * just created and prints it; later runs read it from `demo-key` in the data home (user-only, like the
 * admin token) as long as that key is still active, since the database holds only its hash.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { hashLocalKey } from '../../core/keys/local-key.ts';
import type { GatewayState } from '../../core/state/gateway-state.ts';

export const demoKeyFile = (home: string): string => path.join(home, 'demo-key');

export function saveDemoKey(home: string, secret: string): void {
  writeFileSync(demoKeyFile(home), `${secret}\n`, { mode: 0o600 });
}

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** The command, or null when no demo key is known (its file is gone, or the key was disabled or rotated). */
export async function demoCurl(home: string, baseUrl: string, createdSecret: string | null, store: GatewayState): Promise<string | null> {
  if (!(await store.providers.list()).some((p) => p.type === 'demo')) return null;
  let auth: string;
  if (createdSecret) auth = `"Authorization: Bearer ${createdSecret}"`;
  else {
    let saved: string;
    try {
      saved = readFileSync(demoKeyFile(home), 'utf8').trim();
    } catch {
      return null;
    }
    if ((await store.keys.findByHash(hashLocalKey(saved)))?.state !== 'active') return null;
    auth = `"Authorization: Bearer $(cat ${shellQuote(demoKeyFile(home))})"`;
  }
  const body = JSON.stringify({ model: 'demo-chat', messages: [{ role: 'user', content: 'hi' }] });
  return `curl -s ${baseUrl}/chat/completions -H ${auth} -H 'content-type: application/json' -d '${body}'`;
}
