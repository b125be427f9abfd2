/** Every queue of the system, in one place: BullMQ queues, and the call queue (transactions). */
export const QueueNames = {
  /**
   * Real-time agent operations (begin, end, record, rollback, authorization); the agent waits for the
   * result. A Redis list of its own, not BullMQ: two round trips a job (src/shared/infra/call-queue.ts).
   */
  transactions: 'transactions',
  /** Ended calls waiting to be rated, recorded and debited. */
  processing: 'processing',
  /** Alert deliveries (e-mail, SMS, webhook). */
  alerts: 'alerts',
  /** Repeatable housekeeping (stale-call scans). */
  maintenance: 'maintenance',
  /** Batches of finished calls (CDR imports, recordTransactions): rated, recorded and debited in bulk. */
  imports: 'imports',
} as const;

export type QueueName = (typeof QueueNames)[keyof typeof QueueNames];

/**
 * BullMQ job ids must not contain ':' (its key separator); tags are free text, so they are
 * percent-encoded and joined with '/', which encodeURIComponent always escapes: the id is unambiguous.
 */
export function jobId(kind: string, ...parts: string[]): string {
  return [kind, ...parts.map((p) => encodeURIComponent(p))].join('/');
}
