import type { RunningTransaction } from '../types';
import { callDurationSeconds } from './duration';
import { feeAt } from './tariff';

/**
 * What a running entry will cost so far: an ended entry is rated to its end, one still in
 * progress up to `now`. Entries without a rate (inbound by default) cost nothing.
 */
export function runningCost(entry: RunningTransaction, now: Date): bigint {
  if (entry.rate === null || entry.rate === undefined) return 0n;
  // timestamp_end rather than in_progress decides, so an entry whose end is known is never
  // rated past it even if its flag lags.
  const end = entry.timestamp_end ?? now;
  return feeAt(entry.rate, entry.timestamp_begin, callDurationSeconds(entry.timestamp_begin, end));
}

/** Balance minus what the account's running transactions already owe (docs/DESIGN.md section 3). */
export function availableBalance(balance: bigint, running: readonly RunningTransaction[], now: Date): bigint {
  let owed = 0n;
  for (const entry of running) owed += runningCost(entry, now);
  return balance - owed;
}
