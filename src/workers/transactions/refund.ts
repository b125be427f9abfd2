import type { TransactionDoc } from '../../shared/domain/types';
import { applyOnce, batchDebitState, BatchDebitState, chargeOp, finishRerating, opIds, wasApplied } from '../../shared/domain/ledger';
import { recordCredit } from '../../shared/domain/metrics';
import { recordFate } from './fates';
import { reconcile } from './reconcile';
import type { TransactionDeps } from './deps';

/**
 * Gives a record's fee back if it was charged (once: `refund:<_id>`), then deletes the record. Reads
 * the record afresh: one already taken away by someone else is left alone.
 */
export async function refundRecord(
  deps: TransactionDeps,
  seen: TransactionDoc,
  batches: ReadonlyMap<string, BatchDebitState> = new Map(),
): Promise<void> {
  const { transactions } = deps.ctx.mongo.collections;
  const record = await transactions.findOne({ _id: seen._id, account_tag: seen.account_tag });
  if (!record) return;
  // A rerating under way is finished first: the refund gives back the fee the ledger holds (ledger/rerate.ts).
  if (record.rerate) {
    await finishRerating(deps.ctx.mongo.collections, record);
    return refundRecord(deps, seen, batches);
  }
  if (await charged(deps, record, batches)) {
    if (record.state !== 'rolling_back') {
      // Only at the fee read and with no rerating begun since: 'rolling_back' and a rerating exclude each other.
      const marked = await transactions.updateOne(
        { _id: record._id, account_tag: record.account_tag, fee: record.fee, rerate: { $in: [null] } },
        { $set: { state: 'rolling_back', rolling_back_at: new Date() } },
      );
      if (marked.matchedCount === 0) return refundRecord(deps, seen, batches);
    }
    // Also a refund of 0 (a free call): its entry is what tells reconcile that the call was rolled back
    // after its charge, should a late processing delivery write its record again.
    const refund = await applyOnce(deps.ctx.mongo.collections, {
      op: opIds.refund(record._id),
      account_tag: record.account_tag,
      amount: record.fee,
      kind: 'refund',
      transaction_tag: record.transaction_tag,
      ref: record._id,
    });
    if (refund.outcome === 'applied') recordCredit(deps.ctx, record.fee);
  }
  await transactions.deleteOne({ _id: record._id, account_tag: record.account_tag });
}

/**
 * Whether a record's fee was taken. Records written through the API (no state) never were; 'charged'
 * and 'rolling_back' ones were. An 'imported' one was if its batch's debit of that account (or its
 * settlement's) is in the ledger. A 'pending' one of processing was if its charge is in the ledger (its entry is gone, so it
 * can no longer be charged); a 'pending' one of recordTransaction is charged now, so that the record
 * job, wherever it is, finds its charge done and the refund below matches it.
 */
export async function charged(
  deps: TransactionDeps,
  record: TransactionDoc,
  batches: ReadonlyMap<string, BatchDebitState>,
): Promise<boolean> {
  const store = deps.ctx.mongo.collections;
  switch (record.state) {
    case undefined:
      return false;
    case 'charged':
    case 'rolling_back':
      return true;
    case 'imported': {
      if (record.charge_op === undefined) return false;
      const known = batches.get(record.charge_op);
      if (known)
        return (
          'debitedBy' in known && (await wasApplied(store, record.account_tag, opIds.importDebit(known.debitedBy, record.account_tag)))
        );
      // Not checked by the caller (an agent batch taken back, a rollback finished later): read now. A
      // batch that has not finished is an agent batch taken back midway: whatever it debited is under its id.
      const batch = await batchDebitState(deps.ctx.mongo.db, record.charge_op);
      // Its settlement will charge this record: deleting it uncharged now would leave that charge without a record.
      if (batch.state === 'settling')
        throw new Error(`record ${record._id}: its import batch ${record.charge_op} is not settled yet; try again`);
      return wasApplied(
        store,
        record.account_tag,
        opIds.importDebit('debitedBy' in batch ? batch.debitedBy : record.charge_op, record.account_tag),
      );
    }
    case 'pending': {
      const charge = opIds.charge(record._id);
      if (record.charged_by !== 'record') return wasApplied(store, record.account_tag, charge);
      await applyOnce(store, chargeOp(record));
      return true;
    }
  }
}

/**
 * Whether another operation's record of the same call stands in the way of a new one: a record of a
 * recordTransaction still in flight stands only if that operation is decided 'done' (waited for until
 * `deadline`: 'unknown' past it); one abandoned, or being taken away (a rollback's or an undo's
 * 'rolling_back'), is taken away here ('gone'); any other record stands.
 */
export async function foreignRecordFate(
  deps: TransactionDeps,
  record: TransactionDoc,
  deadline: number,
): Promise<'stands' | 'gone' | 'unknown'> {
  if (record.state === 'pending' && record.charged_by === 'processing') {
    // Processing's record: it stands while its running entry does; once the entry is gone, the ledger
    // says whether processing charged it (it stands) or a rollback removed the entry first (it goes).
    const running = await deps.ctx.mongo.collections.accounts.findOne(
      { account_tag: record.account_tag, 'running_transactions.id': record._id },
      { projection: { _id: 1 } },
    );
    if (running) return 'stands';
    return (await reconcile(deps, record.account_tag, record._id)) === 'rolled-back' ? 'gone' : 'stands';
  }
  if (record.state === 'pending' && record.record_job) {
    const fate = await recordFate(deps, record, deadline);
    if (fate !== 'abandoned') return fate === 'done' ? 'stands' : 'unknown';
  } else if (record.state !== 'rolling_back') {
    return 'stands';
  }
  await refundRecord(deps, record);
  return 'gone';
}
