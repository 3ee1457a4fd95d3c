import { describe, expect, it, vi } from 'vitest';
import { newRequestId } from '../../core/gateway/request-id.ts';

describe('request ids', () => {
  it('are req_ and 24 hex characters, all different', () => {
    const ids = Array.from({ length: 2000 }, () => newRequestId());
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{24}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('sort by time: a later call has a larger id (the audit index grows at its end)', () => {
    vi.useFakeTimers();
    try {
      vi.setSystemTime(new Date('2026-11-24T10:00:00.000Z'));
      const earlier = Array.from({ length: 50 }, () => newRequestId());
      vi.setSystemTime(new Date('2026-11-24T10:00:00.001Z'));
      const later = Array.from({ length: 50 }, () => newRequestId());
      for (const a of earlier) for (const b of later) expect(a < b).toBe(true);
      expect(earlier[0].slice(4, 16)).toBe(Date.parse('2026-11-24T10:00:00.000Z').toString(16).padStart(12, '0'));
    } finally {
      vi.useRealTimers();
    }
  });
});
