import type { TransactionDeps } from './deps';

/** Removes one running entry, by its unique id; true when this call removed it. */
export async function removeEntry(deps: TransactionDeps, accountTag: string, entryId: string): Promise<boolean> {
  const result = await deps.ctx.mongo.collections.accounts.updateOne(
    { account_tag: accountTag, 'running_transactions.id': entryId },
    { $pull: { running_transactions: { id: entryId } }, $inc: { rev: 1 } },
  );
  return result.modifiedCount === 1;
}
