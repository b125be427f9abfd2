import { Job, Worker, type Processor, type RedisClient, type WorkerOptions } from 'bullmq';

/**
 * BullMQ's Worker, less one Redis script call for each job it takes after waking up (issue 12,
 * docs/BENCHMARKS.md "what one call costs").
 *
 * Why: an idle worker blocks on the queue's marker (BZPOPMIN), wakes when a job is added, and takes
 * it with the `moveToActive` script. Its main loop then calls `moveToActive` again at once, to see
 * whether more jobs are waiting, before it blocks again. On a queue fed a job at a time (processing),
 * so that second call finds nothing nearly always: a script of eleven keys, about a tenth of a
 * millisecond of Redis and of Node each, per job.
 *
 * Why skipping it loses no job: the script that took the job (prepareJobForProcessing) puts the
 * marker back whenever it takes one. So the worker, reporting "nothing more" instead of asking,
 * blocks on a marker that is already there, wakes at once, and asks then; or another worker took
 * that marker, and that worker asks. Any job added later adds the marker again. Only the one call
 * right after a wake-up is skipped; every other fetch (jobs already waiting, a finished job fetching
 * the next) is BullMQ's own.
 *
 * It reads one private field of BullMQ's Worker (`waiting`: set while it blocks and takes the job it
 * woke for). The constructor checks that the field exists, so a BullMQ that renamed it fails at start
 * instead of silently probing again (test/integration/lean-worker.test.ts counts the calls).
 */
export class LeanWorker<D = unknown, R = unknown, N extends string = string> extends Worker<D, R, N> {
  /** The last fetch took a job on a wake-up: the fetch right after it would find the queue empty. */
  private nextFetchIsMoot = false;

  constructor(name: string, processor: Processor<D, R, N>, opts: WorkerOptions) {
    super(name, processor, opts);
    if (!('waiting' in this))
      throw new Error('bullmq: Worker has no `waiting` field any more; src/workers/lean-worker.ts needs a look at this BullMQ version');
  }

  private get wokenUp(): boolean {
    return (this as unknown as { waiting: Promise<number> | null }).waiting !== null;
  }

  protected override async moveToActive(client: RedisClient, token: string, name?: string): Promise<Job<D, R, N>> {
    const woken = this.wokenUp;
    if (this.nextFetchIsMoot && !woken) {
      this.nextFetchIsMoot = false;
      // What an empty fetch reports (the worker is drained and blocks on the marker next).
      return this.nextJobFromJobData(undefined, undefined, token);
    }
    const job = await super.moveToActive(client, token, name);
    this.nextFetchIsMoot = woken && job !== undefined;
    return job;
  }
}
