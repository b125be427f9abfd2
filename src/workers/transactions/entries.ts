import type { TransactionDeps } from './deps';

/**
 * Removes one running entry, by its unique id; true when this call removed it. `fenceJob`: the job whose
 * own write decided the entry's begin (a rollback takes such an entry): fenced in the same write, so
 * that job, run again from a restored queue, cannot begin the call anew (src/shared/domain/calls/decisions.ts).
 */
export async function removeEntry(deps: TransactionDeps, accountTag: string, entryId: string, fenceJob?: string): Promise<boolean> {
  const result = await deps.ctx.mongo.collections.accounts.updateOne(
    { account_tag: accountTag, 'running_transactions.id': entryId },
    {
      $pull: { running_transactions: { id: entryId } },
      $inc: { rev: 1 },
      ...(fenceJob ? { $push: { fenced_jobs: { job: fenceJob, at: new Date() } } } : {}),
    },
  );
  return result.modifiedCount === 1;
}
