import type { AppContext } from '../../shared/context';
import { AccountDoc, callId } from '../../shared/domain/types';
import type { Collections } from '../../shared/mongo';
import { jobId } from '../../shared/queues/names';
import type { EndJob, OperationResult } from '../../shared/queues/payloads';
import { Reasons, TransactionDeps } from './deps';

/** Marks one account's entry of a call ended, once: the filter requires it to be in progress. */
async function endEntry(
  accounts: Collections['accounts'],
  accountTag: string,
  call: string,
  end: Date,
): Promise<AccountDoc | null> {
  return accounts.findOneAndUpdate(
    { account_tag: accountTag, running_transactions: { $elemMatch: { call_id: call, in_progress: true } } },
    {
      $set: { 'running_transactions.$[e].in_progress': false, 'running_transactions.$[e].timestamp_end': end },
      $inc: { rev: 1 },
    },
    { returnDocument: 'after', arrayFilters: [{ 'e.call_id': call }] },
  );
}

/** Queues the rating of an ended entry; the job id is the entry's unique id, so a repeat is a no-op. */
export async function enqueueProcessing(ctx: AppContext, accountTag: string, entry: { id: string; transaction_tag: string }): Promise<void> {
  await ctx.queues.processing.add(
    'process',
    { account_tag: accountTag, transaction_tag: entry.transaction_tag, entry_id: entry.id, enqueued_at: new Date().toISOString() },
    { jobId: processingJobId(entry.id) },
  );
}

export const processingJobId = (entryId: string) => jobId('process', entryId);

/**
 * endTransaction: sets the end on every party's entry (balance unchanged, the entry still counts in
 * available-balance calculations) and queues each for processing.
 */
export async function end(deps: TransactionDeps, job: EndJob): Promise<OperationResult> {
  const { accounts } = deps.ctx.mongo.collections;
  const at = new Date(job.timestamp_end);
  const call = callId(job.account_tag, job.transaction_tag);
  const updated = await endEntry(accounts, job.account_tag, call, at);
  if (!updated) {
    const account = await accounts.findOne({ account_tag: job.account_tag, 'running_transactions.call_id': call }, { projection: { _id: 1 } });
    return { ok: false, reason: account ? Reasons.ALREADY_ENDED : Reasons.NOT_FOUND };
  }
  const entryOf = (doc: AccountDoc | null) => doc?.running_transactions.find((r) => r.call_id === call);
  const own = entryOf(updated)!;
  const others = (own.call_parties ?? []).filter((tag) => tag !== job.account_tag);
  const ended = await Promise.all(others.map(async (tag) => ({ tag, entry: entryOf(await endEntry(accounts, tag, call, at)) })));
  const queued = [{ tag: job.account_tag, entry: own }, ...ended].filter((e) => e.entry !== undefined);
  await Promise.all(queued.map(({ tag, entry }) => enqueueProcessing(deps.ctx, tag, entry!)));
  return { ok: true, reason: null };
}
