import type { Collection } from 'mongodb';
import type { AccountDoc } from '../types';
import type { LedgerEntryDoc } from './model';

/**
 * Whether an operation changed the balance, read only (wasApplied in apply.ts settles what it finds;
 * this one writes nothing, for a reader that must not, such as the decision readers of
 * src/shared/domain/calls/decisions.ts). The order wasApplied relies on: the account's markers first,
 * then the ledger (a marker is removed only after its entry exists).
 */
export async function isApplied(
  store: { accounts: Collection<AccountDoc>; ledger: Collection<LedgerEntryDoc> },
  accountTag: string,
  opId: string,
): Promise<boolean> {
  const marked = await store.accounts.findOne({ account_tag: accountTag, 'ledger_pending.op': opId }, { projection: { _id: 1 } });
  if (marked) return true;
  return (await store.ledger.findOne({ _id: opId, account_tag: accountTag }, { projection: { _id: 1 } })) !== null;
}
