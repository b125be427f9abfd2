import type { AccountDoc, RunningTransaction } from '../types';
import { expiredReservations, isReservation } from '../types';
import { runningCost } from './available';

/**
 * Spend limits (issue 34, part 3; docs/AGENT.md, "Spend limits"). Pure: what an account has spent in its
 * windows is read from the ledger by the caller (src/shared/domain/ledger/spend.ts).
 *
 * The room the limits leave for one more call is the least of:
 * - max_call_cost;
 * - each window's limit, less what the account spent in it (its charges less its refunds, by the time
 *   they were applied), less what its other calls commit: a reservation or a running call its hold (the
 *   cost of what its authorization granted), or what it owes so far if more; an ended call not yet
 *   charged what it owes.
 * Holds are written with the reservation, conditional on the account being unchanged, so parallel
 * authorizations see each other's holds and together never grant more than the limit.
 */

export type SpendLimits = Pick<AccountDoc, 'max_call_cost' | 'hourly_spend_limit' | 'daily_spend_limit'>;

/** What an account spent in its rolling windows (charges less refunds), in minor units. */
export interface Spent {
  hour: bigint;
  day: bigint;
}

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

const isSet = (limit: bigint | null | undefined): limit is bigint => limit !== null && limit !== undefined;

/** Whether the account has an hourly or daily limit (its spending must be read, and its calls hold money). */
export function hasWindowLimits(account: SpendLimits): boolean {
  return isSet(account.hourly_spend_limit) || isSet(account.daily_spend_limit);
}

/** Whether any spend limit applies to the account. */
export function hasSpendLimits(account: SpendLimits): boolean {
  return isSet(account.max_call_cost) || hasWindowLimits(account);
}

/** What the account's calls other than `call` commit against its windows at `now`. */
export function committed(running: readonly RunningTransaction[], now: Date, call: string | null): bigint {
  const expired = new Set(expiredReservations(running, now));
  let total = 0n;
  for (const entry of running) {
    if (entry.call_id === call || expired.has(entry)) continue;
    const hold = entry.hold ?? 0n;
    if (isReservation(entry)) total += hold;
    else {
      const owed = runningCost(entry, now);
      total += entry.in_progress && hold > owed ? hold : owed;
    }
  }
  return total;
}

/**
 * The most one more call (`call`, whose own entries do not count) may cost under the account's limits;
 * null when no limit applies. Below zero when the windows are overspent (a rerating, a call that ran over).
 */
export function limitRoom(
  account: SpendLimits & Pick<AccountDoc, 'running_transactions'>,
  spent: Spent | null,
  now: Date,
  call: string | null,
): bigint | null {
  let room: bigint | null = isSet(account.max_call_cost) ? account.max_call_cost : null;
  const least = (value: bigint) => (room = room === null || value < room ? value : room);
  if (hasWindowLimits(account)) {
    const held = committed(account.running_transactions ?? [], now, call);
    const windows = spent ?? { hour: 0n, day: 0n };
    if (isSet(account.hourly_spend_limit)) least(account.hourly_spend_limit - windows.hour - held);
    if (isSet(account.daily_spend_limit)) least(account.daily_spend_limit - windows.day - held);
  }
  return room;
}
