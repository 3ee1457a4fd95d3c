/** Shared checks for integration tests: a call's audit row, and the SDK error a failing call throws. */
import OpenAI from 'openai';
import { expect } from 'vitest';
import { getCall } from '../../core/storage/audit-queries.ts';
import type { StoredCall } from '../../core/storage/audit-queries.ts';
import type { TestGateway } from './gateway-harness.ts';
import { dbOf } from './sqlite-db.ts';

/** The audit row of a call, once the writer has it (polled with a deadline, never a fixed sleep). */
export async function auditRow(t: TestGateway, id: string | null | undefined): Promise<StoredCall> {
  expect(id).toBeTruthy();
  const deadline = Date.now() + 3_000;
  for (;;) {
    t.flush();
    const row = getCall(dbOf(t.gw), id as string);
    if (row) return row;
    if (Date.now() > deadline) throw new Error(`no audit row for ${id}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The `OpenAI.APIError` a call rejects with (any other outcome fails the test). */
export async function apiError(p: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await p;
  } catch (err) {
    if (err instanceof OpenAI.APIError) return err;
    throw err;
  }
  throw new Error('expected the call to fail');
}
