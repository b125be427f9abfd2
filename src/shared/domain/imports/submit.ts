import type { Db } from 'mongodb';
import type { Queue, QueueEvents } from 'bullmq';
import type { ImportBatchResult, ImportJob, ImportLine } from '../queues/payloads';
import {
  BatchContentMismatch,
  batchDigest,
  finishedBatch,
  importBatchId,
  newSettlementId,
  settlementDone,
  type SettlementResult,
} from '../ledger';

/** How often batches in flight are checked beside the queue events (an event lost in a reconnect must not hang the CLI). */
const POLL_MS = 3000;

/**
 * When the debits of finished batches are sent to a settlement (src/shared/domain/ledger/settlements.ts):
 * every SETTLE_EVERY_BATCHES batches, or once the oldest waiting has waited SETTLE_AFTER_MS, and at
 * the end. Fewer, larger settlements write fewer account updates (an account touched by many batches
 * pays once); balances trail the import by at most about this long plus one settlement.
 */
export const SETTLE_EVERY_BATCHES = 500;
export const SETTLE_AFTER_MS = 30_000;

interface Waiter {
  kind: 'batch' | 'settlement';
  /**
   * Creation times of the jobs this importer sent for it (the first, and any sent again after Redis
   * lost one): a batch's stored result made by one of them is this run's, not an earlier run's.
   */
  jobTimestamps: Set<number>;
  /** Sends the job again under its id, from what this importer holds; its creation time. */
  resend(): Promise<number>;
  /** A batch's batchDigest: a result stored for other lines (the id reused) is not this batch's. */
  digest?: string;
  resolve(result: unknown): void;
  reject(err: Error): void;
}

export class BatchFailed extends Error {}

/**
 * Puts batches on the `imports` queue and waits for their results, at most `maxInFlight` at a time
 * (the caller awaits `submit`, which is how reading the file slows down to the workers' pace), and
 * sends the settlements that debit what the finished batches charged; `drain` waits for both.
 *
 * The job id is the batch id, so a batch re-sent while its job is still queued or running is not
 * duplicated. A job left completed by an earlier run is removed and sent again: the worker then finds
 * the batch's stored result and answers it as `replayed` (nothing is charged twice); a failed one
 * (retries exhausted) is retried. Replayed batches go to a settlement too: one that an earlier run
 * left unsettled is settled now, one already settled is skipped by the settlement.
 */
export class BatchSubmitter {
  private readonly waiters = new Map<string, Waiter>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly settlements = new Set<Promise<SettlementResult>>();
  /** Finished batches not yet sent to a settlement, by import id; and since when the oldest waits. */
  private readonly unsettled = new Map<string, string[]>();
  private unsettledSince: number | null = null;
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  private readonly onCompleted = ({ jobId, returnvalue }: { jobId: string; returnvalue: unknown }) => this.answer(jobId, returnvalue);
  private readonly onFailed = ({ jobId }: { jobId: string }) => void this.checkFailed(jobId);

  constructor(
    private readonly queue: Queue<ImportJob>,
    private readonly events: QueueEvents,
    private readonly db: Db,
    private readonly maxInFlight: number,
    private readonly onResult: (result: ImportBatchResult, lines: ImportLine[]) => Promise<void>,
  ) {
    // Several submitters may share one QueueEvents (the API runs imports side by side): close() removes these.
    events.on('completed', this.onCompleted);
    events.on('failed', this.onFailed);
    this.timer = setInterval(() => void this.poll(), POLL_MS);
    this.timer.unref();
  }

  /** Sends a batch; resolves once there is room for another (not when this one is done). */
  async submit(importId: string, batch: number, lines: ImportLine[]): Promise<void> {
    while (this.inFlight.size >= this.maxInFlight) await Promise.race(this.inFlight);
    if (this.closed) throw new BatchFailed('import stopped');
    const id = importBatchId(importId, batch);
    const data: ImportJob = { import_id: importId, batch, lines, deadline: null };
    const task = this.enqueue(id, 'import-batch', data)
      // Registered after the job exists: an event that came first is caught by the next poll.
      .then((jobTimestamp) =>
        this.wait<ImportBatchResult>(id, 'batch', jobTimestamp, () => this.enqueue(id, 'import-batch', data), batchDigest(lines)),
      )
      .then((result) => {
        this.toSettle(importId, id);
        return this.onResult(result, lines);
      })
      .finally(() => this.inFlight.delete(task));
    this.inFlight.add(task);
    // A failure is reported by drain(); keep it from being an unhandled rejection meanwhile.
    task.catch(() => undefined);
  }

  /**
   * Waits for every batch sent, then settles the finished ones and waits for the settlements; throws
   * the first failure. The batches that finished are settled even when another failed, so their
   * balances do not wait for the recovery sweep.
   */
  async drain(): Promise<void> {
    let failure: unknown = null;
    try {
      await settleAll(this.inFlight);
    } catch (err) {
      failure = err;
    }
    if (!this.closed) this.sendSettlements();
    await settleAll(this.settlements);
    if (failure) throw failure;
  }

  /** A batch finished (now or in an earlier run): its debits go to the next settlement. */
  private toSettle(importId: string, batchId: string): void {
    const list = this.unsettled.get(importId) ?? [];
    list.push(batchId);
    this.unsettled.set(importId, list);
    this.unsettledSince ??= Date.now();
    if (list.length >= SETTLE_EVERY_BATCHES) this.sendSettlements();
  }

  /** Sends a settlement for every batch finished since the last one. */
  private sendSettlements(): void {
    for (const [importId, batches] of this.unsettled) {
      const id = newSettlementId(importId);
      const send = () => this.enqueue(id, 'import-settle', { import_id: importId, settlement_id: id, batches });
      const task = send()
        .then((timestamp) => this.wait<SettlementResult>(id, 'settlement', timestamp, send))
        .finally(() => this.settlements.delete(task));
      this.settlements.add(task);
      task.catch(() => undefined);
    }
    this.unsettled.clear();
    this.unsettledSince = null;
  }

  /** The answer of a job now queued (by the queue's events, or the poll). */
  private wait<T>(jobId: string, kind: Waiter['kind'], jobTimestamp: number, resend: Waiter['resend'], digest?: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.closed) reject(new BatchFailed('import stopped'));
      else
        this.waiters.set(jobId, { kind, jobTimestamps: new Set([jobTimestamp]), resend, digest, resolve: (r) => resolve(r as T), reject });
    });
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    this.events.off('completed', this.onCompleted);
    this.events.off('failed', this.onFailed);
    for (const w of this.waiters.values()) w.reject(new BatchFailed('import stopped'));
    this.waiters.clear();
  }

  /** Makes sure a job of this id is queued or running; returns its creation time. */
  private async enqueue(id: string, name: 'import-batch' | 'import-settle', data: ImportJob): Promise<number> {
    const existing = await this.queue.getJob(id);
    const state = existing ? await existing.getState() : 'missing';
    if (existing && state !== 'completed' && state !== 'failed' && state !== 'unknown') return existing.timestamp; // an interrupted run sent it
    // A failed one is sent again with this run's lines, not retried with its own: they may be another
    // run's (an import id given for other calls), which the batch's claim refuses for good.
    if (existing) await existing.remove();
    const job = await this.queue.add(name, data, { jobId: id });
    return job.timestamp;
  }

  private answer(jobId: string, returnvalue: unknown): void {
    const waiter = this.waiters.get(jobId);
    const result = (typeof returnvalue === 'string' ? JSON.parse(returnvalue) : returnvalue) as unknown;
    // No value: the job was read before it completed (getJob, then getState saw 'completed'); the next
    // poll reads it again.
    if (!waiter || result === null || result === undefined) return;
    this.waiters.delete(jobId);
    // Finished by another job of this importer (the one Redis lost, which ran on): this import's work.
    const batch = result as Partial<ImportBatchResult>;
    if (waiter.kind === 'batch' && batch.replayed && batch.finished_by_job !== undefined && waiter.jobTimestamps.has(batch.finished_by_job))
      waiter.resolve({ ...batch, replayed: false });
    else waiter.resolve(result);
  }

  private async checkFailed(jobId: string): Promise<void> {
    const waiter = this.waiters.get(jobId);
    if (!waiter) return;
    const job = await this.queue.getJob(jobId);
    if (job && (await job.getState()) === 'failed') {
      this.waiters.delete(jobId);
      waiter.reject(new BatchFailed(`${waiter.kind} ${jobId} failed after ${job.attemptsMade} attempts: ${job.failedReason}`));
    }
  }

  /** The fallback to events: a finished job's return value, or the result stored in MongoDB once the job is gone. */
  private async poll(): Promise<void> {
    if (this.unsettledSince !== null && Date.now() - this.unsettledSince >= SETTLE_AFTER_MS && !this.closed) this.sendSettlements();
    for (const jobId of [...this.waiters.keys()]) {
      try {
        const job = await this.queue.getJob(jobId);
        const state = job ? await job.getState() : 'missing';
        if (job && state === 'completed') this.answer(jobId, job.returnvalue);
        else if (state === 'failed') await this.checkFailed(jobId);
        else if (state === 'missing' || state === 'unknown') await this.settleFromStore(jobId);
      } catch {
        // A transient Redis or MongoDB error: the next poll tries again.
      }
    }
  }

  /**
   * A job gone from the queue: its outcome as MongoDB holds it (retention removed the finished job), or,
   * with none, the job sent again under its id (Redis lost it before it finished: a restart without
   * persistence). Safe to repeat: a batch's claim and a settlement's document make a second run charge
   * nothing twice, and a job still queued under the id is not added again.
   */
  private async settleFromStore(jobId: string): Promise<void> {
    const waiter = this.waiters.get(jobId);
    if (!waiter) return;
    if (waiter.kind === 'settlement') {
      const done = await settlementDone(this.db, jobId);
      if (done) this.answer(jobId, done);
      else waiter.jobTimestamps.add(await waiter.resend());
      return;
    }
    const stored = await finishedBatch(this.db, jobId);
    if (stored && waiter.digest !== undefined && stored.lines_digest !== undefined && stored.lines_digest !== waiter.digest) {
      this.waiters.delete(jobId);
      waiter.reject(new BatchFailed(new BatchContentMismatch(jobId).message));
    } else if (stored) this.answer(jobId, { ...stored.result, replayed: !waiter.jobTimestamps.has(stored.job_timestamp) });
    else waiter.jobTimestamps.add(await waiter.resend());
  }
}

/** Waits until the set is empty (tasks remove themselves); throws the first failure. */
async function settleAll(tasks: ReadonlySet<Promise<unknown>>): Promise<void> {
  while (tasks.size > 0) {
    const results = await Promise.allSettled([...tasks]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
}
