import type { Filter } from 'mongodb';
import { checkBalanceAlerts, checkSpendAlerts } from '../../shared/domain/alerts';
import { hasWindowLimits } from '../../shared/domain/rating';
import type { AppContext } from '../../shared/domain/context';
import type { AccountDoc, TransactionDoc } from '../../shared/domain/types';
import { recordRatedCall } from '../../shared/domain/metrics';
import type { Collections } from '../../shared/domain/store';
import { groupInsert, groupInsertUnlessExists, groupUpdate } from '../../shared/infra/group-commands';
import { opIds, wasApplied } from '../../shared/domain/ledger';

/** A record's unique key: the account, the tag and the calling account. */
export function recordKey(record: Pick<TransactionDoc, 'account_tag' | 'transaction_tag' | 'origin_account_tag'>) {
  return { account_tag: record.account_tag, transaction_tag: record.transaction_tag, origin_account_tag: record.origin_account_tag };
}

/**
 * Inserts a record (grouped with the process's concurrent record inserts); a duplicate (same account,
 * tag and caller) returns the existing one instead.
 */
export async function insertRecord(
  transactions: Collections['transactions'],
  record: TransactionDoc,
): Promise<{ inserted: boolean; existing: TransactionDoc | null }> {
  if ((await groupInsert(transactions, record)) === 'inserted') return { inserted: true, existing: null };
  return { inserted: false, existing: await recordInTheWay(transactions, record, recordKey(record)) };
}

/** The record that kept `record` from being written (found by `filter`). */
async function recordInTheWay(
  transactions: Collections['transactions'],
  record: TransactionDoc,
  filter: Filter<TransactionDoc>,
): Promise<TransactionDoc> {
  const existing = await transactions.findOne(filter);
  // Gone again already (rolled back in between): the caller decides afresh on its next attempt.
  if (!existing) throw new Error(`record ${record.account_tag}/${record.transaction_tag} changed while being written; retry`);
  return existing;
}

/**
 * insertRecord for an end that charges in its own write (end-charge.ts): the same outcome, written as an
 * upsert so that it travels in one `update` command with the charged marks waiting to be sent (group
 * commands). `existing`: the record that holds its `_id` or its unique key instead.
 */
export async function placeRecord(
  transactions: Collections['transactions'],
  record: TransactionDoc,
): Promise<{ existing: TransactionDoc | null }> {
  const outcome = await groupInsertUnlessExists(transactions, record, ['account_tag']);
  if (outcome === 'inserted') return { existing: null };
  const filter = outcome === 'exists' ? { _id: record._id, account_tag: record.account_tag } : recordKey(record);
  return { existing: await recordInTheWay(transactions, record, filter) };
}

/**
 * `existing`, the pending record of the entry `record` is for, when it is this end's or when its charge
 * is applied (another end charged the call: its record stands, whatever this end holds); otherwise (a
 * pending record of another end whose charging write never applied: killed between its two writes,
 * end-charge.ts) it is replaced by `record` and null is returned. A process can hold an entry that
 * another end already charged (its begin run again after a fault, then the call's end re-sent), so
 * holding the entry proves nothing: the ledger decides (the chaos run of 2026-11-27, seed 471265, lost
 * a charged call's record to such an end). Replaced only while it is pending and still that end's.
 * Throws when it changed in between (a retry decides again).
 */
export async function replaceIfStale(
  store: Pick<Collections, 'transactions' | 'accounts' | 'ledger'>,
  existing: TransactionDoc,
  record: TransactionDoc,
): Promise<TransactionDoc | null> {
  if (existing.end_job === record.end_job) return existing;
  if (await wasApplied(store, existing.account_tag, opIds.charge(existing._id))) return existing;
  const replaced = await store.transactions.replaceOne(
    { _id: existing._id, account_tag: existing.account_tag, state: 'pending', end_job: existing.end_job ?? null },
    record,
  );
  if (replaced.matchedCount !== 1) throw new Error(`record ${existing._id} changed while being replaced; retry`);
  return null;
}

/**
 * Marks a pending record charged, once its charge is in the ledger (grouped with concurrent marks).
 * Filtered by its account too: the shard key (docs/SCALING.md).
 */
export async function markCharged(
  transactions: Collections['transactions'],
  accountTag: string,
  recordId: string,
  /** How long the mark may wait for the next grouped update to travel with (group-commands.ts). */
  waitMs?: number,
): Promise<void> {
  await groupUpdate(transactions, { _id: recordId, account_tag: accountTag, state: 'pending' }, { $set: { state: 'charged' } }, waitMs);
}

/**
 * Metrics, balance alerts and spend-limit alerts after a charge. Alerts are queued fire-and-forget: they never delay
 * rating and never fail it.
 */
export function afterDebit(ctx: AppContext, updated: AccountDoc, fee: bigint): void {
  recordRatedCall(ctx, fee);
  if (fee > 0n) void checkBalanceAlerts(ctx, updated, updated.balance + fee);
  if (fee > 0n && hasWindowLimits(updated)) void checkSpendAlerts(ctx, updated, fee);
}
