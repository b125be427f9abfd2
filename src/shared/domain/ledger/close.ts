import type { AccountDoc } from '../types';
import { isDuplicateKeyError } from '../../infra/mongo-errors';
import { writeEntry } from './apply';
import { opIds } from './model';
import type { Collections } from '../store';
import type { LedgerStore } from './store';

/**
 * Closes the ledger of an account just deleted (its document as it was removed): the entries of balance
 * changes it still had pending are written (nobody else can settle them now: the recovery sweep finds
 * markers on accounts), then one `close:<account _id>` entry of opening_balance - balance, which brings
 * the sum of the tag's entries back to zero. An account created later under the same tag then folds to
 * its own opening balance (issue 31: a deleted account's history left a permanent audit difference on
 * its successor). The close's id is the deleted account's `_id`, so a repeat writes nothing twice.
 *
 * Last, its records are marked as the deleted account's (`closed_account`): a phone number is given to
 * the next customer, and rerating and rollback, which find records by tag, must never correct or refund
 * the old customer's calls on the new account (docs/OPERATIONS.md, "Deleting accounts").
 */
export async function closeAccount(
  store: LedgerStore & Pick<Collections, 'transactions'>,
  deleted: Pick<AccountDoc, '_id' | 'account_tag' | 'balance' | 'opening_balance' | 'ledger_pending' | 'import_marker'>,
): Promise<void> {
  for (const marker of [...(deleted.ledger_pending ?? []), ...(deleted.import_marker ? [deleted.import_marker] : [])]) {
    await writeEntry(store, deleted.account_tag, marker);
  }
  const amount = (deleted.opening_balance ?? 0n) - deleted.balance;
  try {
    await store.ledger.insertOne({
      _id: opIds.close(deleted._id),
      account_tag: deleted.account_tag,
      amount,
      kind: 'close',
      transaction_tag: null,
      ref: 'account deleted',
      at: new Date(),
    });
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
  }
  await store.transactions.updateMany(
    { account_tag: deleted.account_tag, closed_account: { $exists: false } },
    { $set: { closed_account: deleted._id } },
  );
}
