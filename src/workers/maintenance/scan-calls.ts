import { endCallAlert, longCallAlert } from '../../shared/domain/alerts';
import type { AppContext } from '../../shared/domain/context';
import { type AccountDoc, isReservation, type RunningTransaction } from '../../shared/domain/types';
import { availableBalance } from '../../shared/domain/rating';

export interface ScanResult {
  accounts: number;
  longCalls: number;
  exhaustedCalls: number;
}

type ScannedAccount = Pick<
  AccountDoc,
  'account_tag' | 'type' | 'balance' | 'notification_email' | 'notification_mobile' | 'running_transactions'
>;

const PROJECTION = {
  _id: 0,
  account_tag: 1,
  type: 1,
  balance: 1,
  notification_email: 1,
  notification_mobile: 1,
  running_transactions: 1,
} as const;

const callsInProgress = (account: ScannedAccount): RunningTransaction[] =>
  (account.running_transactions ?? []).filter((entry) => entry.in_progress && !isReservation(entry));

/**
 * Looks at every account with a call in progress (a scan, which is fine here: it runs once a
 * minute on one worker, far from the hot path) and raises:
 * - LONG_RUNNING_CALL for each call in progress longer than LONG_CALL_SECONDS;
 * - END_CALL as `scanExhaustedCalls` does (a backstop for it).
 * Both are once per call (see call-alerts.ts), so rescanning the same calls is harmless.
 */
export async function scanRunningCalls(ctx: AppContext, now: Date = new Date()): Promise<ScanResult> {
  const result: ScanResult = { accounts: 0, longCalls: 0, exhaustedCalls: 0 };
  const staleBefore = now.getTime() - ctx.config.longCallSeconds * 1000;
  const cursor = ctx.mongo.collections.accounts.find<ScannedAccount>(
    { 'running_transactions.in_progress': true },
    { projection: PROJECTION },
  );
  for await (const account of cursor) {
    result.accounts += 1;
    for (const entry of callsInProgress(account)) {
      if (entry.timestamp_begin.getTime() < staleBefore) {
        result.longCalls += 1;
        await longCallAlert(ctx, account, entry, now);
      }
    }
    result.exhaustedCalls += await endExhausted(ctx, account, now, now);
  }
  return result;
}

/**
 * The "end this call" check, every END_CALL_SCAN_SECONDS (seconds, so a proxy hears of a call that
 * has used up its balance within seconds): raises END_CALL for each priced call in progress of a
 * PREPAID account whose available balance (balance minus what its running calls owe) is used up by
 * the time of the next check. Looking one period ahead sends the push as the balance runs out rather
 * than up to a period after it. Reads only prepaid accounts with a call in progress.
 */
export async function scanExhaustedCalls(
  ctx: AppContext,
  now: Date = new Date(),
): Promise<Pick<ScanResult, 'accounts' | 'exhaustedCalls'>> {
  const result = { accounts: 0, exhaustedCalls: 0 };
  const nextCheck = new Date(now.getTime() + ctx.config.endCallScanSeconds * 1000);
  const cursor = ctx.mongo.collections.accounts.find<ScannedAccount>(
    { type: 'PREPAID', 'running_transactions.in_progress': true },
    { projection: PROJECTION },
  );
  for await (const account of cursor) {
    result.accounts += 1;
    result.exhaustedCalls += await endExhausted(ctx, account, nextCheck, now);
  }
  return result;
}

/** END_CALL for the priced calls of a prepaid account whose available balance at `at` is used up; how many. */
async function endExhausted(ctx: AppContext, account: ScannedAccount, at: Date, now: Date): Promise<number> {
  if (account.type !== 'PREPAID') return 0;
  const available = availableBalance(BigInt(account.balance), account.running_transactions ?? [], at);
  if (available > 0n) return 0;
  // Only a call whose cost still grows can be ended to stop the loss: not an unpriced inbound leg, nor
  // a free call (an emergency or toll-free number), which authorization granted its 4 hours.
  const priced = callsInProgress(account).filter((e) => costGrows(e.rate));
  for (const entry of priced) {
    await endCallAlert(
      ctx,
      {
        account_tag: account.account_tag,
        transaction_tag: entry.transaction_tag,
        entry_id: entry.id,
        caller_account_tag: entry.origin_account_tag,
        available_balance: available,
        destination: entry.destination,
      },
      now,
    );
  }
  return priced.length;
}

/** Whether a call on this rate costs more the longer it runs: some price of it (a timed one too) is not free. */
function costGrows(rate: RunningTransaction['rate']): boolean {
  if (rate === null || rate === undefined) return false;
  return rate.rate > 0 || (rate.timed?.prices ?? []).some((p) => p.rate > 0);
}
