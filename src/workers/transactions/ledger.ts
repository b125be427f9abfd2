import type { Filter, UpdateFilter } from 'mongodb';
import type { AccountDoc, TransactionDoc } from '../../shared/domain/types';
import { checkBalanceAlerts } from '../../shared/alerts';
import type { AppContext } from '../../shared/context';
import { recordRatedCall } from '../../shared/metrics';
import type { Collections } from '../../shared/mongo';
import { isDuplicateKeyError } from '../../shared/mongo';

/**
 * How many applied operation ids an account remembers. A marker only has to outlive the window
 * between a balance change and the write that records it elsewhere (a crash and a retry), so a few
 * hundred recent operations per account is ample.
 */
export const APPLIED_OPS_KEPT = 500;

/**
 * Applies `delta` to an account's balance at most once per `opId`: the marker and the amount change in
 * one atomic update, filtered on the marker being absent. `extra` narrows the filter and adds to the
 * update (processing also removes the running entry in the same write).
 * Returns the account as updated when this call applied it; null when it was already applied or the
 * filter missed.
 */
export async function applyBalanceChange(
  accounts: Collections['accounts'],
  accountTag: string,
  delta: bigint,
  opId: string,
  extra: { filter?: Filter<AccountDoc>; update?: UpdateFilter<AccountDoc> } = {},
): Promise<AccountDoc | null> {
  const update: UpdateFilter<AccountDoc> = {
    ...(extra.update ?? {}),
    $inc: { balance: delta, rev: 1 },
    $push: { applied_ops: { $each: [opId], $slice: -APPLIED_OPS_KEPT } },
  } as UpdateFilter<AccountDoc>;
  return accounts.findOneAndUpdate(
    { account_tag: accountTag, applied_ops: { $ne: opId }, ...(extra.filter ?? {}) } as Filter<AccountDoc>,
    update,
    { returnDocument: 'after', projection: { running_transactions: 0, applied_ops: 0 } },
  );
}

export async function opApplied(accounts: Collections['accounts'], accountTag: string, opId: string): Promise<boolean> {
  return (await accounts.countDocuments({ account_tag: accountTag, applied_ops: opId }, { limit: 1 })) > 0;
}

/** Inserts a record; a duplicate (same account and transaction tag) returns the existing one instead. */
export async function insertRecord(
  transactions: Collections['transactions'],
  record: TransactionDoc,
): Promise<{ inserted: boolean; existing: TransactionDoc | null }> {
  try {
    await transactions.insertOne(record);
    return { inserted: true, existing: null };
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
    const existing = await transactions.findOne({ account_tag: record.account_tag, transaction_tag: record.transaction_tag });
    return { inserted: false, existing };
  }
}

export async function markCharged(transactions: Collections['transactions'], accountTag: string, tag: string): Promise<void> {
  await transactions.updateOne({ account_tag: accountTag, transaction_tag: tag, state: 'pending' }, { $set: { state: 'charged' } });
}

export const opIds = {
  process: (tag: string) => `proc/${tag}`,
  record: (tag: string) => `rec/${tag}`,
  rollback: (tag: string, recordId: string) => `rb/${tag}/${recordId}`,
};

/**
 * Metrics and balance alerts after a charge. Alerts are queued fire-and-forget: they never delay
 * rating and never fail it.
 */
export function afterDebit(ctx: AppContext, updated: AccountDoc, fee: bigint): void {
  recordRatedCall(ctx, fee);
  if (fee > 0n) void checkBalanceAlerts(ctx, updated, updated.balance + fee);
}
