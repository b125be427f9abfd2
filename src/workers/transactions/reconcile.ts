import { opIds, wasApplied } from '../../shared/domain/ledger';
import type { TransactionDeps } from './deps';
import { markCharged } from './record-store';
import type { RecordRecovery } from './recovery';

export type ProcessingOutcome = 'charged' | 'already-done' | 'not-ended' | 'rolled-back' | 'gone' | 'duplicate';

/**
 * The entry is gone: finish what an earlier attempt charged, or drop the record of a call rolled back.
 * Also the recovery sweep's way to settle a processing record left 'pending'.
 */
export async function reconcile(deps: TransactionDeps, accountTag: string, recordId: string): Promise<ProcessingOutcome> {
  const { transactions } = deps.ctx.mongo.collections;
  const record = await transactions.findOne({ _id: recordId, account_tag: accountTag });
  if (!record) return 'gone';
  if (record.state !== 'pending') {
    // Charged, but an attempt killed between the ledger entry and the marker removal leaves the
    // marker: finish that here rather than leave it to the recovery sweep.
    if (record.state === 'charged') await wasApplied(deps.ctx.mongo.collections, accountTag, opIds.charge(recordId));
    return 'already-done';
  }
  if (await wasApplied(deps.ctx.mongo.collections, accountTag, opIds.charge(recordId))) {
    // Charged and refunded already: a rollback deleted this record, and a delivery of this job that had
    // read the entry before the charge wrote it again. Marked charged, a rolled-back call would show a
    // charged record (and its tag could not be used again); the refund is the last word.
    if (await wasApplied(deps.ctx.mongo.collections, accountTag, opIds.refund(recordId))) {
      await transactions.deleteOne({ _id: recordId, account_tag: accountTag, state: 'pending' });
      return 'rolled-back';
    }
    await markCharged(transactions, accountTag, recordId);
    return 'already-done';
  }
  await transactions.deleteOne({ _id: recordId, account_tag: accountTag, state: 'pending' });
  return 'rolled-back';
}

/**
 * The recovery sweep's part for processing: a record left 'pending' by processing is settled from the
 * ledger once its running entry is gone (while the entry is there, processing or requeue-ended charges it).
 */
export const processingRecovery: RecordRecovery = {
  due: () => true,
  jobOf: () => null,
  recover: async (deps, record) => {
    if (
      await deps.ctx.mongo.collections.accounts.findOne(
        { account_tag: record.account_tag, 'running_transactions.id': record._id },
        { projection: { _id: 1 } },
      )
    )
      return null;
    const outcome = await reconcile(deps, record.account_tag, record._id);
    return outcome === 'already-done' ? 'finished' : outcome === 'rolled-back' ? 'undone' : null;
  },
};
