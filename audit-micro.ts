import { openDatabase } from './core/storage/db.ts';
import { AuditWriter } from './core/storage/audit-writer.ts';
import type { CallRow } from './core/storage/audit-writer.ts';
import fs from 'node:fs';
const mode = process.argv[2] ?? 'base';
fs.rmSync('/tmp/mb', { recursive: true, force: true }); fs.mkdirSync('/tmp/mb');
const db = openDatabase('/tmp/mb/g.db');
if (mode === 'notrig') { db.exec('DROP TRIGGER calls_spend_daily; DROP TRIGGER calls_usage_hourly;'); }
if (mode === 'nohourly') { db.exec('DROP TRIGGER calls_usage_hourly;'); }
const w = new AuditWriter(db, { flushIntervalMs: 1e9, maxBatch: 500 });
const req = JSON.stringify({ model: 'bench-model', messages: [{ role: 'system', content: 'x'.repeat(300) }, { role: 'user', content: 'y'.repeat(600) }], max_tokens: 256 });
const res = JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'z'.repeat(400) }, finish_reason: 'stop' }], usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150, cost: 0.0001 } });
const row = (i: number): CallRow => ({ id: `req_${i}_${Math.random()}`, time: Date.now(), keyId: 'k1', keyName: 'bench', endpoint: '/v1/chat/completions', modelRequested: 'bench-model', model: 'bench-model', provider: 'up', status: 200, errorType: null, errorMessage: null, stream: false, inputTokens: 100, outputTokens: 50, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: 0.000123, pricing: 'priced', priceVersion: 'v1', latencyMs: 3, ttftMs: null, attempts: 1, attemptsJson: '[{"provider":"up","model":"bench-model","status":200,"error":null,"duration_ms":2}]', requestBody: req, responseBody: res, bodySecrets: ['sk-secret-abcdef0123456789'], userAgent: 'bench/1' });
for (let round = 0; round < 3; round++) {
  const N = 20000;
  const c0 = process.cpuUsage();
  for (let i = 0; i < N; i++) { w.record(row(i)); if (i % 500 === 499) w.flush(); }
  w.flush();
  const c = process.cpuUsage(c0);
  console.log(mode, round, ((c.user + c.system) / N).toFixed(1), 'µs/row', 'sys', (c.system / N).toFixed(1));
}
