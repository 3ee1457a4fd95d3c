/**
 * Picks out the audit rows of the calls being recorded, as the handler queues them: a row knows the
 * call's cost (a stream without a usage chunk carries none in its bytes) and its real outcome (a stream
 * that failed after its 200 still has status 200 on the wire).
 */
import type { AuditSink } from '../storage/threaded-audit-writer.ts';
import type { CallRow } from '../storage/audit-writer.ts';

export class AuditWatch {
  private readonly audit: AuditSink;
  private readonly watched = new Map<string, CallRow | null>();
  private listening = false;

  constructor(audit: AuditSink) {
    this.audit = audit;
  }

  watch(requestId: string): void {
    if (!this.listening) {
      this.listening = true;
      this.audit.onRow((r) => {
        if (this.watched.has(r.id)) this.watched.set(r.id, r);
      });
    }
    this.watched.set(requestId, null);
  }

  /** The row queued for this request since `watch`, or null; stops watching it. */
  take(requestId: string): CallRow | null {
    const r = this.watched.get(requestId) ?? null;
    this.watched.delete(requestId);
    return r;
  }
}
