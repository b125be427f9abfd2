import { endCallAlert, longCallAlert } from '../../shared/alerts';
import type { AppContext } from '../../shared/context';
import type { AccountDoc } from '../../shared/domain/types';
import { availableBalance } from '../../shared/rating';

export interface ScanResult {
  accounts: number;
  longCalls: number;
  exhaustedCalls: number;
}

type ScannedAccount = Pick<
  AccountDoc,
  'account_tag' | 'type' | 'balance' | 'notification_email' | 'notification_mobile' | 'running_transactions'
>;

/**
 * Looks at every account with a call in progress (a scan, which is fine here: it runs once a
 * minute on one worker, far from the hot path) and raises:
 * - LONG_RUNNING_CALL for each call in progress longer than LONG_CALL_SECONDS;
 * - END_CALL for each priced call in progress of a PREPAID account whose available balance
 *   (balance minus what its running calls owe so far) is used up.
 * Both are once per call (see call-alerts.ts), so rescanning the same calls is harmless.
 */
export async function scanRunningCalls(ctx: AppContext, now: Date = new Date()): Promise<ScanResult> {
  const result: ScanResult = { accounts: 0, longCalls: 0, exhaustedCalls: 0 };
  const staleBefore = now.getTime() - ctx.config.longCallSeconds * 1000;
  const cursor = ctx.mongo.collections.accounts.find<ScannedAccount>(
    { 'running_transactions.in_progress': true },
    {
      projection: { _id: 0, account_tag: 1, type: 1, balance: 1, notification_email: 1, notification_mobile: 1, running_transactions: 1 },
    },
  );
  for await (const account of cursor) {
    result.accounts += 1;
    const inProgress = (account.running_transactions ?? []).filter((entry) => entry.in_progress);
    for (const entry of inProgress) {
      if (entry.timestamp_begin.getTime() < staleBefore) {
        result.longCalls += 1;
        await longCallAlert(ctx, account, entry, now);
      }
    }
    if (account.type !== 'PREPAID') continue;
    const available = availableBalance(BigInt(account.balance), account.running_transactions ?? [], now);
    if (available > 0n) continue;
    // Only calls that cost something can be ended to stop the loss; an unpriced inbound leg cannot.
    for (const entry of inProgress.filter((e) => e.rate !== null && e.rate !== undefined)) {
      result.exhaustedCalls += 1;
      await endCallAlert(
        ctx,
        { account_tag: account.account_tag, transaction_tag: entry.transaction_tag, available_balance: available, destination: entry.destination },
        now,
      );
    }
  }
  return result;
}
