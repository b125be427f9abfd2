import type { Db } from 'mongodb';
import type { Queue, QueueEvents } from 'bullmq';
import type { ImportBatchJob, ImportBatchResult, ImportLine } from '../queues/payloads';
import { finishedBatch, importBatchId } from '../ledger';

/** How often batches in flight are checked beside the queue events (an event lost in a reconnect must not hang the CLI). */
const POLL_MS = 3000;

interface Waiter {
  /** Creation time of the job we wait for (tells its stored result from an earlier run's). */
  jobTimestamp: number;
  resolve(result: ImportBatchResult): void;
  reject(err: Error): void;
}

export class BatchFailed extends Error {}

/**
 * Puts batches on the `imports` queue and waits for their results, at most `maxInFlight` at a time
 * (the caller awaits `submit`, which is how reading the file slows down to the workers' pace).
 *
 * The job id is the batch id, so a batch re-sent while its job is still queued or running is not
 * duplicated. A job left completed by an earlier run is removed and sent again: the worker then finds
 * the batch's stored result and answers it as `replayed` (nothing is charged twice); a failed one
 * (retries exhausted) is retried.
 */
export class BatchSubmitter {
  private readonly waiters = new Map<string, Waiter>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  private readonly onCompleted = ({ jobId, returnvalue }: { jobId: string; returnvalue: unknown }) => this.settle(jobId, returnvalue);
  private readonly onFailed = ({ jobId }: { jobId: string }) => void this.checkFailed(jobId);

  constructor(
    private readonly queue: Queue<ImportBatchJob>,
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
    const task = this.enqueue(id, { import_id: importId, batch, lines, deadline: null })
      // Registered after the job exists: an event that came first is caught by the next poll.
      .then(
        (jobTimestamp) =>
          new Promise<ImportBatchResult>((resolve, reject) => {
            if (this.closed) reject(new BatchFailed('import stopped'));
            else this.waiters.set(id, { jobTimestamp, resolve, reject });
          }),
      )
      .then((result) => this.onResult(result, lines))
      .finally(() => this.inFlight.delete(task));
    this.inFlight.add(task);
    // A failure is reported by drain(); keep it from being an unhandled rejection meanwhile.
    task.catch(() => undefined);
  }

  /** Waits for every batch sent; throws the first failure. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) {
      const results = await Promise.allSettled([...this.inFlight]);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    }
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    this.events.off('completed', this.onCompleted);
    this.events.off('failed', this.onFailed);
    for (const w of this.waiters.values()) w.reject(new BatchFailed('import stopped'));
    this.waiters.clear();
  }

  /** Makes sure a job for the batch is queued or running; returns its creation time. */
  private async enqueue(id: string, data: ImportBatchJob): Promise<number> {
    const existing = await this.queue.getJob(id);
    const state = existing ? await existing.getState() : 'missing';
    if (existing && state === 'failed') {
      await existing.retry('failed');
      return existing.timestamp;
    }
    if (existing && state !== 'completed' && state !== 'unknown') return existing.timestamp; // an interrupted run sent it
    if (existing) await existing.remove();
    const job = await this.queue.add('import-batch', data, { jobId: id });
    return job.timestamp;
  }

  private settle(jobId: string, returnvalue: unknown): void {
    const waiter = this.waiters.get(jobId);
    const result = (typeof returnvalue === 'string' ? JSON.parse(returnvalue) : returnvalue) as ImportBatchResult | null | undefined;
    // No value: the job was read before it completed (getJob, then getState saw 'completed'); the next
    // poll reads it again.
    if (!waiter || result === null || result === undefined) return;
    this.waiters.delete(jobId);
    waiter.resolve(result);
  }

  private async checkFailed(jobId: string): Promise<void> {
    const waiter = this.waiters.get(jobId);
    if (!waiter) return;
    const job = await this.queue.getJob(jobId);
    if (job && (await job.getState()) === 'failed') {
      this.waiters.delete(jobId);
      waiter.reject(new BatchFailed(`batch ${jobId} failed after ${job.attemptsMade} attempts: ${job.failedReason}`));
    }
  }

  /** The fallback to events: a finished job's return value, or the result stored in MongoDB once the job is gone. */
  private async poll(): Promise<void> {
    for (const jobId of [...this.waiters.keys()]) {
      try {
        const job = await this.queue.getJob(jobId);
        const state = job ? await job.getState() : 'missing';
        if (job && state === 'completed') this.settle(jobId, job.returnvalue);
        else if (state === 'failed') await this.checkFailed(jobId);
        else if (state === 'missing' || state === 'unknown') {
          const stored = await finishedBatch(this.db, jobId);
          const ours = this.waiters.get(jobId)?.jobTimestamp;
          if (stored) this.settle(jobId, { ...stored.result, replayed: stored.job_timestamp !== ours });
        }
      } catch {
        // A transient Redis or MongoDB error: the next poll tries again.
      }
    }
  }
}
