import type { Filter } from 'mongodb';
import type { AccountDoc, RunningTransaction } from '../../shared/domain/types';
import { carriedEntry } from './ended-entry';
import { groupFindElement } from '../../shared/infra/group-commands';
import { applyGuarded, chargeOp } from '../../shared/domain/ledger';
import type { ProcessingJob } from '../../shared/domain/queues/payloads';
import type { TransactionDeps } from './deps';
import { afterDebit, insertRecord, markCharged, replaceIfStale } from './record-store';
import { recordOfEntry } from './records';
import { removeEntry } from './entries';
import { finishPendingRollbacks } from './rollback';

import { processingRecovery, reconcile, type ProcessingOutcome } from './reconcile';

export type { ProcessingOutcome } from './reconcile';

/**
 * Rates an ended call of one account, saves its record, debits the balance and removes the running
 * entry. Exactly once whatever is retried or redelivered (docs/DESIGN.md section 2):
 *  1. insert the record ('pending'), whose `_id` is the running entry's unique id, so every attempt
 *     writes the same record and the charge's ledger id (`charge:<_id>`) names this call only;
 *  2. one atomic account update, guarded by the entry being there, removes it and debits the fee
 *     (src/shared/domain/ledger: the entry cannot come back, so the debit cannot happen twice);
 *  3. the ledger entry, the record marked 'charged', the account's marker removed.
 * When step 2 finds no entry, the ledger tells whether an earlier attempt charged it (finish step 3)
 * or a rollback removed the entry first (delete the pending record: the call is not charged).
 */
export async function processEndedCall(
  deps: TransactionDeps,
  job: ProcessingJob,
): Promise<{ outcome: ProcessingOutcome; fee: bigint; account?: AccountDoc }> {
  // The entry as its end left it, carried in the job: charged without reading the account. The charge
  // is guarded by the account still holding this entry ended by that end; when it does not, the
  // account is read and the call decided as below (a rollback took it, or the sweep settled the end).
  if (job.ended) {
    const carried = await chargeEntry(deps, job.account_tag, carriedEntry({ ...job, ended: job.ended }), {
      running_transactions: { $elemMatch: { id: job.entry_id, end_job: job.ended.end_job } },
    });
    if (carried) return carried;
  }
  const { accounts } = deps.ctx.mongo.collections;
  // The account's tag and this call's entry only: a busy account holds hundreds of running calls.
  const read = await groupFindElement<AccountDoc, RunningTransaction>(
    accounts,
    'account_tag',
    job.account_tag,
    'running_transactions',
    'id',
    job.entry_id,
  );
  const account = read?.doc;
  const entry = read?.element;
  if (!account || !entry) return { outcome: await reconcile(deps, job.account_tag, job.entry_id), fee: 0n };
  if (entry.in_progress || !entry.timestamp_end) return { outcome: 'not-ended', fee: 0n };
  return (
    (await chargeEntry(deps, account.account_tag, entry, { 'running_transactions.id': entry.id })) ?? {
      outcome: await reconcile(deps, account.account_tag, entry.id),
      fee: 0n,
    }
  );
}

/**
 * Records and charges one ended entry of `accountTag` (steps 1 to 3 above), the debit guarded by
 * `guard` (the entry present, which the same write pulls). Null when the guard did not hold: nothing
 * charged by this attempt; the caller decides from the store what became of the entry.
 */
async function chargeEntry(
  deps: TransactionDeps,
  accountTag: string,
  entry: RunningTransaction,
  guard: Filter<AccountDoc>,
): Promise<{ outcome: ProcessingOutcome; fee: bigint; account?: AccountDoc } | null> {
  const { transactions } = deps.ctx.mongo.collections;
  const record = recordOfEntry(accountTag, entry);
  let { existing } = await insertRecord(transactions, record);
  // The record of an earlier use of this tag whose rollback was answered ok but is not carried out on
  // this account yet: carry it out first; it is not this call's record.
  if (
    existing &&
    existing._id !== record._id &&
    (await finishPendingRollbacks(deps, entry.origin_account_tag, entry.transaction_tag)) > 0
  ) {
    ({ existing } = await insertRecord(transactions, record));
  }
  // Another entry's record of the tag, left pending by processing or an end that charges in its own
  // write: while its entry is gone and its charge never applied, it is no call's record (an end on a
  // kept entry of an earlier use of the tag writes one for a moment, then deletes it): settled as the
  // sweep settles it (reconcile.ts), it goes, and this call's record takes the key.
  if (
    existing &&
    existing._id !== record._id &&
    existing.state === 'pending' &&
    existing.charged_by === 'processing' &&
    (await processingRecovery.recover(deps, existing, undefined)) === 'undone'
  ) {
    ({ existing } = await insertRecord(transactions, record));
  }
  if (existing && existing._id !== record._id) {
    // The same call (account, caller, tag) was recorded by someone else: this entry must not charge it again.
    await removeEntry(deps, accountTag, entry.id);
    deps.ctx.logger.warn(
      { account_tag: accountTag, transaction_tag: entry.transaction_tag },
      'ended call already recorded: entry removed without charge',
    );
    return { outcome: 'duplicate', fee: 0n };
  }
  if (existing && existing.state !== 'pending') return { outcome: 'already-done', fee: 0n };
  // The record charged: an earlier attempt's (its fee), unless it is a stale one of another end.
  const charging = (existing && (await replaceIfStale(deps.ctx.mongo.collections, existing, record))) ?? record;
  const fee = charging.fee;

  const applied = await applyGuarded(
    deps.ctx.mongo.collections,
    chargeOp(charging),
    guard,
    { $pull: { running_transactions: { id: entry.id } } },
    () => markCharged(transactions, accountTag, record._id),
    deps.settledMarkers,
  );
  if (!applied) return null;
  afterDebit(deps.ctx, applied, fee);
  return { outcome: 'charged', fee, account: applied };
}
