import type { AppContext } from '../../shared/domain/context';
import type { AccountDoc } from '../../shared/domain/types';
import { enqueueProcessing, processingJob, processingJobId } from '../transactions/end';
import { takeoverMs } from './recover';

/**
 * An ended call normally leaves running_transactions within seconds; older than this, it was lost.
 * Measured from the call's timestamp_end (the client's clock) for entries ended before ends carried
 * their own deadline; otherwise from that deadline, by the recovery sweep's takeover time.
 */
export const ENDED_GRACE_MS = 120_000;

/**
 * Finds ended calls whose processing never happened and queues it again. endTransaction ends the
 * entry and then enqueues its processing: a worker that dies between the two, or Redis losing the
 * job, would otherwise leave the call unbilled and counted in the available balance forever. A job
 * that failed all its retries is retried; a job still waiting or running is left alone. Processing
 * is idempotent, so a call queued twice is charged once.
 */
export async function requeueEndedCalls(ctx: AppContext, now: Date = new Date()): Promise<number> {
  const before = now.getTime() - ENDED_GRACE_MS;
  const decidedBefore = now.getTime() - takeoverMs(ctx.config.jobLockMs);
  const cursor = ctx.mongo.collections.accounts.find<Pick<AccountDoc, 'account_tag' | 'running_transactions'>>(
    { 'running_transactions.in_progress': false },
    { projection: { _id: 0, account_tag: 1, running_transactions: 1 } },
  );
  let requeued = 0;
  for await (const account of cursor) {
    for (const entry of account.running_transactions ?? []) {
      if (entry.in_progress || !(entry.timestamp_end instanceof Date)) continue;
      // The end's own deadline (server time) when known; the client's timestamp_end otherwise.
      if (entry.end_deadline != null ? entry.end_deadline >= decidedBefore : entry.timestamp_end.getTime() >= before) continue;
      // Only an end decided 'done' is charged; an undecided or abandoned one is the recovery sweep's.
      if (
        entry.end_job &&
        !entry.end_decided &&
        (await ctx.mongo.collections.outcomes.findOne({ _id: entry.end_job }, { projection: { state: 1 } }))?.state !== 'done'
      )
        continue;
      const job = await ctx.queues.processing.getJob(processingJobId(entry.id));
      const state = job ? await job.getState() : 'missing';
      if (state === 'failed') await job!.retry('failed');
      else if (state === 'missing' || state === 'unknown' || state === 'completed') {
        if (job) await job.remove();
        await enqueueProcessing(ctx, processingJob(account.account_tag, entry.transaction_tag, entry.id));
      } else continue;
      requeued += 1;
      ctx.logger.warn(
        { account_tag: account.account_tag, transaction_tag: entry.transaction_tag, job_state: state },
        'ended call was not processed: queued again',
      );
    }
  }
  return requeued;
}
