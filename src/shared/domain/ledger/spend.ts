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
 * that counted the charge it reverses (the record's `charge:` entry, by its `ref`): refunding
 * yesterday's call today must not let today spend its limit twice. A credit whose charge is not in the
 * window (older, or an import's batch debit) counts nothing there; a window never goes below zero.
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
  // When each record's charge was applied (within the day), for the credits that reverse it.
  const chargedAt = new Map<string, number>();
  for (const c of changes) if (c.kind === 'charge' && c.ref !== null && c.at.getTime() > dayStart) chargedAt.set(c.ref, c.at.getTime());
  const spent: Spent = { hour: 0n, day: 0n };
  for (const c of changes) {
    // A debit counts in the windows it was applied in; a credit in those its charge was applied in.
    const counted = c.amount > 0n ? (c.ref === null ? undefined : chargedAt.get(c.ref)) : c.at.getTime();
    if (counted === undefined || counted <= dayStart) continue;
    spent.day -= c.amount;
    if (counted > hourStart) spent.hour -= c.amount;
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
