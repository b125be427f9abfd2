import type { AccountDoc } from '../../shared/domain/types';
import type { Collections } from '../../shared/domain/store';
import { chunks } from '../../shared/infra/chunks';

/** What a batch needs of an account: rating preferences, links, and (a batch that debits) the state its debit is conditional on. */
export type BatchAccount = Pick<
  AccountDoc,
  | 'account_tag'
  | 'active'
  | 'pricelist_tags'
  | 'carrier_tags'
  | 'carrier_tags_override'
  | 'linked_accounts'
  | 'ledger_rev'
  | 'import_marker'
>;

/**
 * Reads accounts by their unique tag with `$in` (one query per 100 tags, run in parallel), then their
 * linked (parent) accounts the same way until none is missing. Accounts in `known` are taken from
 * there instead of read (their linked accounts are followed all the same). Running entries are left
 * out, and so is the debit state unless `debitState` (a file batch leaves its debits to a settlement:
 * it needs neither `ledger_rev` nor the import slot, whose marker can list a hundred batches).
 * Returns the accounts read, and those taken from `known`.
 */
export async function loadAccounts(
  accounts: Collections['accounts'],
  tags: Iterable<string>,
  debitState = true,
  known: ReadonlyMap<string, BatchAccount> = new Map(),
): Promise<Map<string, BatchAccount>> {
  const projection = {
    _id: 0,
    account_tag: 1,
    active: 1,
    pricelist_tags: 1,
    carrier_tags: 1,
    carrier_tags_override: 1,
    linked_accounts: 1,
    ...(debitState ? { ledger_rev: 1, import_marker: 1 } : {}),
  };
  const found = new Map<string, BatchAccount>();
  const asked = new Set<string>();
  let wanted = [...new Set(tags)];
  while (wanted.length > 0) {
    for (const t of wanted) asked.add(t);
    const toRead = wanted.filter((t) => !known.has(t));
    const batches = await Promise.all(
      chunks(toRead).map((part) => accounts.find({ account_tag: { $in: part } }, { projection }).toArray()),
    );
    const next = new Set<string>();
    for (const doc of [...wanted.flatMap((t) => known.get(t) ?? []), ...batches.flat()]) {
      found.set(doc.account_tag, doc as BatchAccount);
      for (const linked of doc.linked_accounts ?? []) if (!asked.has(linked)) next.add(linked);
    }
    wanted = [...next];
  }
  return found;
}
