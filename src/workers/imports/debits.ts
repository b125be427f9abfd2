import type { AnyBulkWriteOperation, Filter } from 'mongodb';
import type { AccountDoc } from '../../shared/domain/types';
import type { Collections } from '../../shared/mongo';
import { APPLIED_OPS_KEPT } from '../transactions/ledger';
import { reloadDebitState } from './accounts';

/** Rounds of conflicts (the account changed between read and write) before the batch is failed and retried. */
const MAX_ROUNDS = 50;

export interface DebitState {
  rev: number | undefined;
  /** The marker is in `applied_ops`: this debit was applied already. */
  marked: boolean;
}

/**
 * Applies each account's total for the batch once: in one atomic update per account, the balance
 * drops by the total and the batch marker is pushed to `applied_ops` (the bounded list ledger.ts keeps),
 * exactly what applyBalanceChange does for one call.
 *
 * The update is conditional on the account's `rev` as read (compare-and-swap; every balance change
 * bumps `rev`) rather than on `applied_ops: { $ne: marker }`: the filter is then an exact key, so all of
 * a batch's debits go in one unordered bulk write without a scan. It is as safe provided the marker was
 * known to be absent at that `rev`: either read (`marked`), or certain because this is the batch's
 * first execution and the accounts were read before it claimed the batch (batch.ts). Accounts whose
 * write missed (they changed meanwhile) are re-read with their markers and retried.
 */
export async function applyDebits(
  accounts: Collections['accounts'],
  debits: ReadonlyMap<string, bigint>,
  marker: string,
  initial: ReadonlyMap<string, DebitState>,
): Promise<void> {
  let state: ReadonlyMap<string, DebitState> = initial;
  let pending = [...debits.keys()];
  for (let round = 0; round < MAX_ROUNDS; round++) {
    // A missing account (deleted since it was read) has nothing to debit.
    pending = pending.filter((tag) => state.has(tag) && !state.get(tag)!.marked);
    if (pending.length === 0) return;
    const ops: AnyBulkWriteOperation<AccountDoc>[] = pending.map((tag) => {
      const { rev } = state.get(tag)!;
      // `rev: null` also matches an account never changed (no `rev` yet), and stays an exact key.
      const filter = { account_tag: tag, rev: rev ?? null } as Filter<AccountDoc>;
      return {
        updateOne: {
          filter,
          update: {
            $inc: { balance: -debits.get(tag)!, rev: 1 },
            $push: { applied_ops: { $each: [marker], $slice: -APPLIED_OPS_KEPT } },
          },
        },
      };
    });
    const result = await accounts.bulkWrite(ops, { ordered: false });
    if (result.modifiedCount === ops.length) return;
    state = await reloadDebitState(accounts, pending, marker);
  }
  throw new Error(`debits of ${marker}: accounts kept changing for ${MAX_ROUNDS} rounds`);
}
