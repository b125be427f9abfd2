import type { AppContext } from '../../shared/context';
import type { AccountDoc } from '../../shared/domain/types';
import type { Collections } from '../../shared/mongo';
import { jobId } from '../../shared/queues/names';
import type { EndJob, OperationResult } from '../../shared/queues/payloads';
import { Reasons, TransactionDeps } from './deps';

/** Marks one account's entry ended, once: the filter requires it to be in progress. */
async function endEntry(
  accounts: Collections['accounts'],
  accountTag: string,
  tag: string,
  end: Date,
): Promise<AccountDoc | null> {
  return accounts.findOneAndUpdate(
    { account_tag: accountTag, running_transactions: { $elemMatch: { transaction_tag: tag, in_progress: true } } },
    {
      $set: { 'running_transactions.$[e].in_progress': false, 'running_transactions.$[e].timestamp_end': end },
      $inc: { rev: 1 },
    },
    { returnDocument: 'after', arrayFilters: [{ 'e.transaction_tag': tag }] },
  );
}

/** Queues the rating of an ended entry; the deterministic id makes a repeat a no-op. */
export async function enqueueProcessing(ctx: AppContext, accountTag: string, tag: string): Promise<void> {
  await ctx.queues.processing.add(
    'process',
    { account_tag: accountTag, transaction_tag: tag, enqueued_at: new Date().toISOString() },
    { jobId: jobId('process', accountTag, tag) },
  );
}

/**
 * endTransaction: sets the end on every party's entry (balance unchanged, the entry still counts in
 * available-balance calculations) and queues each for processing.
 */
export async function end(deps: TransactionDeps, job: EndJob): Promise<OperationResult> {
  const { accounts } = deps.ctx.mongo.collections;
  const at = new Date(job.timestamp_end);
  const updated = await endEntry(accounts, job.account_tag, job.transaction_tag, at);
  if (!updated) {
    const account = await accounts.findOne(
      { account_tag: job.account_tag, 'running_transactions.transaction_tag': job.transaction_tag },
      { projection: { _id: 1 } },
    );
    return { ok: false, reason: account ? Reasons.ALREADY_ENDED : Reasons.NOT_FOUND };
  }
  const entry = updated.running_transactions.find((r) => r.transaction_tag === job.transaction_tag);
  const others = (entry?.call_parties ?? []).filter((tag) => tag !== job.account_tag);
  await Promise.all(others.map((tag) => endEntry(accounts, tag, job.transaction_tag, at)));
  await Promise.all([job.account_tag, ...others].map((tag) => enqueueProcessing(deps.ctx, tag, job.transaction_tag)));
  return { ok: true, reason: null };
}
