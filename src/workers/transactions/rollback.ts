import type { OperationResult, RollbackJob } from '../../shared/queues/payloads';
import { removeEntries } from './begin';
import type { TransactionDoc } from '../../shared/domain/types';
import { recordCredit } from '../../shared/metrics';
import { Reasons, TransactionDeps } from './deps';
import { applyBalanceChange, opApplied, opIds } from './ledger';

/**
 * rollbackTransaction. A running (or ended, not yet processed) call is removed from every party
 * without charge. A processed call has each party's record deleted and its fee credited back, in
 * steps safe to retry: mark the record 'rolling_back', credit once (operation marker), delete it.
 */
export async function rollback(deps: TransactionDeps, job: RollbackJob): Promise<OperationResult> {
  const { accounts, transactions } = deps.ctx.mongo.collections;
  const tag = job.transaction_tag;
  const account = await accounts.findOne(
    { account_tag: job.account_tag, 'running_transactions.transaction_tag': tag },
    { projection: { running_transactions: 1 } },
  );
  const entry = account?.running_transactions.find((r) => r.transaction_tag === tag);
  if (entry) {
    await removeEntries(deps, entry.call_parties ?? [job.account_tag], tag);
    return { ok: true, reason: null };
  }

  const record = await transactions.findOne({ account_tag: job.account_tag, transaction_tag: tag });
  if (!record) return { ok: false, reason: Reasons.NOT_FOUND };
  const parties = record.call_parties?.length ? record.call_parties : [job.account_tag];
  for (const partyTag of parties) {
    const partyRecord =
      partyTag === job.account_tag ? record : await transactions.findOne({ account_tag: partyTag, transaction_tag: tag });
    if (!partyRecord) continue;
    if (await wasCharged(deps, partyRecord)) {
      await transactions.updateOne({ _id: partyRecord._id }, { $set: { state: 'rolling_back' } });
      const credited = await applyBalanceChange(accounts, partyTag, partyRecord.fee, opIds.rollback(tag, partyRecord._id));
      if (credited) recordCredit(deps.ctx, partyRecord.fee);
    }
    await transactions.deleteOne({ _id: partyRecord._id });
  }
  return { ok: true, reason: null };
}

/**
 * Whether a record's fee was taken from the balance. Records written through the API (no state) never
 * were. A 'pending' one was only if the marker of the debit that owns it is there: an import batch's
 * (`charge_op`), or processing's or recordTransaction's; otherwise a rollback removed its entry before
 * processing could charge it.
 */
async function wasCharged(deps: TransactionDeps, record: TransactionDoc): Promise<boolean> {
  if (record.state === undefined) return false;
  if (record.state !== 'pending') return true;
  const { accounts } = deps.ctx.mongo.collections;
  const markers = record.charge_op
    ? [record.charge_op]
    : [opIds.process(record.transaction_tag), opIds.record(record.transaction_tag)];
  for (const marker of markers) if (await opApplied(accounts, record.account_tag, marker)) return true;
  return false;
}
