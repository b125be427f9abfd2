import type { AccountDoc } from '../types';
import type { SpendLimits } from '../rating/limits';
import type { Collections } from '../store';
import { DAY_MS, HOUR_MS, hasSpendLimits, hasWindowLimits, limitRoom, type Spent } from '../rating/limits';
import type { LedgerKind, LedgerMarker } from './model';

/** The kinds that make up spending: what calls cost, less what rollbacks and reratings gave back. Top-ups and adjustments do not. */
const SPENDING: readonly LedgerKind[] = ['charge', 'import', 'refund', 'rerate'];

/**
 * What an account spent in its rolling hour and day at `now` (spend limits, src/shared/domain/rating/limits.ts):
 * the negated sum of its charge, import, refund and rerating entries applied in the window, by the
 * ledger's `at`. A credit (a refund, a rerating that lowered a fee) gives room back only in the windows
 * that counted the debits it reverses (the record's `charge:` entry and the reratings that raised it, by
 * their `ref`, the latest first, never more than they counted): refunding yesterday's call today must
 * not let today spend its limit twice, and a raise taken back today must not stay counted. A credit whose
 * debits are not in the window (older, or an import's batch debit) counts nothing there; a window never
 * goes below zero.
 * A change whose entry is not written yet is still a marker on the account: `account` must have been
 * read before this call, so a marker settled in between is found in the ledger (counted once, by its op)
 * rather than missed. Read only for accounts with an hourly or daily limit: one indexed range read of the
 * account's last day of ledger entries (account_tag, at).
 */
export async function spentInWindows(
  collections: Pick<Collections, 'ledger'>,
  account: Pick<AccountDoc, 'account_tag' | 'ledger_pending' | 'import_marker'>,
  now: Date,
): Promise<Spent> {
  const dayStart = now.getTime() - DAY_MS;
  const hourStart = now.getTime() - HOUR_MS;
  const entries = await collections.ledger
    .find(
      { account_tag: account.account_tag, at: { $gt: new Date(dayStart) }, kind: { $in: [...SPENDING] } },
      { projection: { _id: 1, amount: 1, at: 1, kind: 1, ref: 1 } },
    )
    .toArray();
  const seen = new Set<string>(entries.map((e) => e._id));
  const markers: LedgerMarker[] = [...(account.ledger_pending ?? []), ...(account.import_marker ? [account.import_marker] : [])];
  const changes: Array<{ amount: bigint; at: Date; kind: LedgerKind; ref: string | null }> = [
    ...entries.map((e) => ({ amount: e.amount, at: e.at, kind: e.kind, ref: e.ref ?? null })),
    ...markers.filter((m) => !seen.has(m.op) && SPENDING.includes(m.kind)),
  ];
  const spent: Spent = { hour: 0n, day: 0n };
  const count = (amount: bigint, at: number) => {
    if (at <= dayStart) return;
    spent.day += amount;
    if (at > hourStart) spent.hour += amount;
  };
  // Each record's debits within the day (its charge, a rerating that raised it), newest first, with
  // what a credit has not reversed yet: a credit reverses the latest applied before it first (a rerating
  // lowering a fee undoes the raise before it), and never more than they counted.
  const debits = new Map<string, Array<{ at: number; left: bigint }>>();
  for (const c of changes) {
    if (c.amount >= 0n || c.ref === null || (c.kind !== 'charge' && c.kind !== 'rerate') || c.at.getTime() <= dayStart) continue;
    const list = debits.get(c.ref) ?? [];
    list.push({ at: c.at.getTime(), left: -c.amount });
    debits.set(c.ref, list);
  }
  for (const list of debits.values()) list.sort((a, b) => b.at - a.at);
  for (const c of [...changes].sort((a, b) => a.at.getTime() - b.at.getTime())) {
    // A debit counts in the windows it was applied in; a credit in those of the debits it reverses.
    if (c.amount <= 0n) {
      count(-c.amount, c.at.getTime());
      continue;
    }
    let credit = c.amount;
    for (const debit of c.ref === null ? [] : (debits.get(c.ref) ?? [])) {
      if (credit === 0n) break;
      // A credit reverses what was charged before it, never a raise that came after it.
      if (debit.at > c.at.getTime()) continue;
      const taken = credit < debit.left ? credit : debit.left;
      debit.left -= taken;
      credit -= taken;
      count(-taken, debit.at);
    }
  }
  return { hour: spent.hour < 0n ? 0n : spent.hour, day: spent.day < 0n ? 0n : spent.day };
}

/**
 * The room an account's spend limits leave for one more call (`call`, whose own entries do not count) at
 * `now`, its spending read first when it has an hourly or daily limit; null when no limit applies. The one
 * reading authorization and begin both make (src/shared/domain/rating/limits.ts has the rule).
 */
export async function spendRoom(
  collections: Pick<Collections, 'ledger'>,
  account: SpendLimits & Pick<AccountDoc, 'account_tag' | 'ledger_pending' | 'import_marker' | 'running_transactions'>,
  now: Date,
  call: string | null,
): Promise<bigint | null> {
  if (!hasSpendLimits(account)) return null;
  const spent = hasWindowLimits(account) ? await spentInWindows(collections, account, now) : null;
  return limitRoom(account, spent, now, call);
}
