import type { AccountDoc } from '../types';
import type { SpendLimits } from '../rating/limits';
import type { Collections } from '../store';
import { DAY_MS, HOUR_MS, hasSpendLimits, hasWindowLimits, limitRoom, type Spent } from '../rating/limits';
import type { LedgerKind, LedgerMarker } from './model';

/** The kinds that make up spending: what calls cost, less what rollbacks and reratings gave back. Top-ups and adjustments do not. */
const SPENDING: readonly LedgerKind[] = ['charge', 'import', 'refund', 'rerate'];

/**
 * What an account spent in its rolling hour and day at `now` (spend limits, src/shared/domain/rating/limits.ts):
 * the negated sum of its charge, import and refund entries applied in the window, by the ledger's `at`.
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
  const dayStart = new Date(now.getTime() - DAY_MS);
  const hourStart = new Date(now.getTime() - HOUR_MS);
  const entries = await collections.ledger
    .find(
      { account_tag: account.account_tag, at: { $gt: dayStart }, kind: { $in: [...SPENDING] } },
      { projection: { _id: 1, amount: 1, at: 1 } },
    )
    .toArray();
  const spent: Spent = { hour: 0n, day: 0n };
  const add = (amount: bigint, at: Date) => {
    if (at.getTime() <= dayStart.getTime()) return;
    spent.day -= amount;
    if (at.getTime() > hourStart.getTime()) spent.hour -= amount;
  };
  const seen = new Set<string>();
  for (const e of entries) {
    seen.add(e._id);
    add(e.amount, e.at);
  }
  const markers: LedgerMarker[] = [...(account.ledger_pending ?? []), ...(account.import_marker ? [account.import_marker] : [])];
  for (const m of markers) if (!seen.has(m.op) && SPENDING.includes(m.kind)) add(m.amount, m.at);
  return spent;
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
