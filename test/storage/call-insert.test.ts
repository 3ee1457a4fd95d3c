import { describe, expect, it } from 'vitest';
import { CALL_COLUMNS, CallInsert } from '../../core/storage/call-insert.ts';
import type { CallValues } from '../../core/storage/call-insert.ts';
import { openDatabase } from '../../core/storage/db.ts';

const base = (id: string): Record<(typeof CALL_COLUMNS)[number], string | number | null> => ({
  id, time: 1_764_000_000_000, key_id: 'k1', key_name: 'dev', endpoint: '/v1/chat/completions', model_requested: 'm', model: 'm',
  provider: 'openai', status: 200, error_type: null, error_message: null, stream: 0, input_tokens: 10, output_tokens: 5, cached_tokens: 0,
  cache_write_tokens: 0, reasoning_tokens: 0, cost_usd: 0.000123, pricing: 'priced', price_version: 'v1', latency_ms: 3, ttft_ms: null,
  attempts: 1, attempts_json: '[]', request_body: '{"a":1}', response_body: '{"b":2}', user_agent: 'ua/1', session_id: null, replayed: 0,
});
const values = (row: Record<string, string | number | null>): CallValues => CALL_COLUMNS.map((c) => row[c]);

describe('CallInsert', () => {
  it('stores every column as given, whether the row leaves the optional ones at their default or sets them', () => {
    const db = openDatabase(':memory:');
    const insert = new CallInsert(db);
    const plain = base('req_plain');
    const full = {
      ...base('req_full'), status: 502, error_type: 'api_error', error_message: 'upstream failed', stream: 1, cached_tokens: 4,
      cache_write_tokens: 2, reasoning_tokens: 3, ttft_ms: 7, session_id: 'sess-1', replayed: 1,
    };
    const some = { ...base('req_some'), stream: 1, ttft_ms: 0, cached_tokens: 1 };
    for (const row of [plain, full, some]) insert.run(values(row));
    for (const row of [plain, full, some]) {
      expect(db.prepare('SELECT * FROM calls WHERE id = ?').get(row.id)).toEqual(row);
    }
  });

  it('reads an absent (undefined) value of a column that defaults to NULL as that default', () => {
    const db = openDatabase(':memory:');
    const v = values(base('req_undef'));
    v[CALL_COLUMNS.indexOf('session_id')] = undefined as unknown as null;
    new CallInsert(db).run(v);
    expect(db.prepare('SELECT session_id FROM calls').get()).toEqual({ session_id: null });
  });
});
