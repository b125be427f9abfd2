import type { AppContext } from '../context';
import type { AccountDoc } from '../types';
import { spentInWindows } from '../ledger/spend';
import { hasWindowLimits, type Spent } from '../rating/limits';
import { enqueueAlert } from './enqueue';
import { recipientOf } from './recipients';

/** The shares of a window's limit at which an alert goes out (issue 34, part 3). */
const LEVELS = [100n, 80n] as const;

/** The highest level (percent of `limit`) that `spent` has reached, or 0. */
function levelOf(spent: bigint, limit: bigint): bigint {
  for (const level of LEVELS) if (spent * 100n >= limit * level) return level;
  return 0n;
}

/**
 * Called by workers after a charge of `fee` on an account with hourly or daily spend limits: an alert
 * (SPEND_LIMIT, same channels as the low-balance alert) when this charge made the account's spending in a
 * window reach 80 % or 100 % of its limit. A crossing alerts once (the job id names the crossing); spending
 * that stays above does not alert again. Never rejects; call it with `void` on a hot path.
 */
export async function checkSpendAlerts(ctx: AppContext, account: AccountDoc, fee: bigint): Promise<void> {
  if (!hasWindowLimits(account) || fee <= 0n) return;
  let spent: Spent;
  try {
    spent = await spentInWindows(ctx.mongo.collections, account, new Date());
  } catch (err) {
    ctx.logger.warn({ err, account_tag: account.account_tag }, 'spend alert: spending could not be read');
    return;
  }
  const windows = [
    { window: 'hour', limit: account.hourly_spend_limit, spent: spent.hour },
    { window: 'day', limit: account.daily_spend_limit, spent: spent.day },
  ] as const;
  for (const w of windows) {
    if (w.limit === null || w.limit === undefined || w.limit <= 0n) continue;
    const level = levelOf(w.spent, w.limit);
    if (level === 0n || levelOf(w.spent - fee, w.limit) >= level) continue;
    await enqueueAlert(
      ctx,
      {
        kind: 'SPEND_LIMIT',
        account_tag: account.account_tag,
        transaction_tag: null,
        ...recipientOf(account),
        at: new Date().toISOString(),
        details: { window: w.window, limit: w.limit.toString(), spent: w.spent.toString(), percent: level.toString() },
        message: `Account ${account.account_tag} has spent ${w.spent} in the last ${w.window}: ${level} % of its limit of ${w.limit}.`,
      },
      { condition: `${w.window}:${level}`, fresh: true, occurrence: `${w.window}:${level}:${w.spent - fee}>${w.spent}` },
    );
  }
}
