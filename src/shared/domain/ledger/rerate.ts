import type { Filter } from 'mongodb';
import type { ChargedSegment, PendingRerating, RateSnapshot, TransactionDoc } from '../types';
import type { Collections } from '../store';
import { applyOnce, type ApplyOutcome } from './apply';
import { opIds } from './model';

/**
 * Rerating one record (docs/RERATING.md): its fee corrected through the ledger, exactly once per record
 * per rerating run, whatever is retried, killed or raced. Three steps, each safe to repeat:
 * 1. intent: the record gets `rerate` (run, fee before and after, new rate and segments), only while it
 *    is charged (never while a rollback takes it away: 'rolling_back' and `rerate` exclude each other), not
 *    already rerated by this run, and still at the fee that was read;
 * 2. ledger: `rerate:<run>:<record>` moves the balance by fee_before - fee_after (applyOnce: once, ever);
 * 3. record: the new fee, rate and segments, the run appended to `reratings`, the intent removed.
 * Whoever finds an intent finishes steps 2 and 3 from it alone (finishRerating): the run's retry, a
 * rollback of the record (which must refund the corrected fee), the recovery sweep. An account deleted
 * meanwhile takes no correction: the intent is dropped and the record keeps its fee (skipped). The audit counts a
 * record with an intent at fee_after once its ledger change is in, at fee_before until then.
 */

/** Records a rerating may correct: those whose fee is taken and stays taken. */
export const RERATABLE_STATES = ['charged', 'imported'] as const;

export interface Rerated {
  fee: bigint;
  rate: RateSnapshot | null;
  segments: ChargedSegment[] | null;
}

export type RerateOutcome =
  /** The fee changed: the difference is in the ledger and on the record (now, or by an earlier attempt of the run). */
  | { outcome: 'changed'; before: bigint; after: bigint; ledger: ApplyOutcome }
  /** Rated again at the same fee: nothing moved. */
  | { outcome: 'unchanged' }
  /** No longer reratable (being rolled back, deleted, not charged). */
  | { outcome: 'skipped' };

const MAX_ATTEMPTS = 20;

/** Step 1 then finishRerating, for one record read by the run; `rated` is its new rating. */
export async function rerateRecord(
  collections: Pick<Collections, 'accounts' | 'ledger' | 'transactions'>,
  seen: TransactionDoc,
  run: string,
  rated: Rerated,
  at: Date = new Date(),
): Promise<RerateOutcome> {
  let record: TransactionDoc | null = seen;
  for (let attempt = 0; attempt < MAX_ATTEMPTS && record; attempt++) {
    // Corrected whole by an earlier attempt of this run (killed before the run moved on): a change all the
    // same, counted from its history, so the run's counts and difference match the ledger.
    const earlier = record.reratings?.find((r) => r.run === run);
    if (earlier) return { outcome: 'changed', before: earlier.fee_before, after: earlier.fee_after, ledger: { outcome: 'already' } };
    if (record.rerate) {
      // This run's own intent (a retry after a crash) is finished; another run's first, then decided again.
      const pending = record.rerate;
      const ledger = await finishRerating(collections, record);
      if (ledger.outcome === 'no-account') return { outcome: 'skipped' };
      if (pending.run === run) return { outcome: 'changed', before: pending.fee_before, after: pending.fee_after, ledger };
      record = await collections.transactions.findOne({ _id: record._id, account_tag: record.account_tag });
      continue;
    }
    if (!(RERATABLE_STATES as readonly string[]).includes(record.state ?? '')) return { outcome: 'skipped' };
    if (rated.fee === record.fee) return { outcome: 'unchanged' };
    const intent: PendingRerating = { run, at, fee_before: record.fee, fee_after: rated.fee, rate: rated.rate, segments: rated.segments };
    const filter: Filter<TransactionDoc> = {
      _id: record._id,
      account_tag: record.account_tag,
      state: { $in: [...RERATABLE_STATES] },
      fee: record.fee,
      rerate: { $in: [null] },
      'reratings.run': { $ne: run },
      // Its account deleted since the run read it (closeAccount marks the records): the tag may be a new
      // customer's now, and the correction would land on them.
      closed_account: { $exists: false },
    };
    const marked = await collections.transactions.updateOne(filter, { $set: { rerate: intent } });
    if (marked.modifiedCount === 1) {
      const ledger = await finishRerating(collections, { ...record, rerate: intent });
      if (ledger.outcome === 'no-account') return { outcome: 'skipped' };
      return { outcome: 'changed', before: intent.fee_before, after: intent.fee_after, ledger };
    }
    record = await collections.transactions.findOne({ _id: record._id, account_tag: record.account_tag });
  }
  return { outcome: 'skipped' };
}

/** Steps 2 and 3 of a record's pending rerating, from its intent alone. Safe to repeat and to race. */
export async function finishRerating(
  collections: Pick<Collections, 'accounts' | 'ledger' | 'transactions'>,
  record: TransactionDoc & { rerate?: PendingRerating | null },
): Promise<ApplyOutcome> {
  const intent = record.rerate;
  if (!intent) throw new Error(`record ${record._id} has no rerating under way`);
  const ledger = await applyOnce(collections, {
    op: opIds.rerate(intent.run, record._id),
    account_tag: record.account_tag,
    amount: intent.fee_before - intent.fee_after,
    kind: 'rerate',
    transaction_tag: record.transaction_tag,
    ref: record._id,
  });
  if (ledger.outcome === 'no-account') {
    // The account was deleted: no ledger took the correction, so the record must not claim it (the
    // audit would count a fee that was never charged). The intent goes; the record keeps its fee.
    await collections.transactions.updateOne(
      { _id: record._id, account_tag: record.account_tag, 'rerate.run': intent.run },
      { $unset: { rerate: '' } },
    );
    return ledger;
  }
  await collections.transactions.updateOne(
    { _id: record._id, account_tag: record.account_tag, 'rerate.run': intent.run },
    {
      $set: { fee: intent.fee_after, destination_rate: intent.rate, segments: intent.segments },
      $unset: { rerate: '' },
      $push: { reratings: { run: intent.run, at: intent.at, fee_before: intent.fee_before, fee_after: intent.fee_after } },
    },
  );
  return ledger;
}
