import type { AppContext } from '../context';
import type { AccountType } from '../types';
import { enqueueAlert } from './enqueue';
import { AlertRecipient, recipientOf } from './recipients';

export interface BalanceAccount extends AlertRecipient {
  balance: bigint;
  /** Per-account low-balance threshold; null or absent uses LOW_BALANCE_THRESHOLD. */
  balance_alert_threshold?: bigint | null;
  type?: AccountType;
}

/** The threshold in force for an account; 0 or less means no low-balance alert, only below zero. */
export function lowBalanceThreshold(ctx: AppContext, account: Pick<BalanceAccount, 'balance_alert_threshold'>): bigint {
  return account.balance_alert_threshold ?? ctx.config.lowBalanceThreshold;
}

/**
 * Called by workers after a balance change, with the balance before it. Two conditions:
 * NEGATIVE_BALANCE (below zero) and LOW_BALANCE (below a positive threshold, not below zero: the
 * negative alert already says more). A change that crosses a line alerts at once, even when the
 * same condition alerted earlier (the balance must have recovered in between, perhaps through a
 * top-up no worker saw); a change that stays below alerts only if the condition has not been
 * alerted within ALERT_REPEAT_SECONDS. Never rejects; call it with `void` on a hot path.
 */
export async function checkBalanceAlerts(ctx: AppContext, account: BalanceAccount, previousBalance: bigint): Promise<void> {
  const threshold = lowBalanceThreshold(ctx, account);
  const { balance } = account;
  const at = new Date().toISOString();
  const base = {
    account_tag: account.account_tag,
    transaction_tag: null,
    ...recipientOf(account),
    at,
  };
  const details = {
    balance: balance.toString(),
    previous_balance: previousBalance.toString(),
    threshold: threshold.toString(),
    type: account.type ?? null,
  };
  const occurrence = `${previousBalance}>${balance}`;
  if (balance < 0n) {
    await enqueueAlert(
      ctx,
      { ...base, kind: 'NEGATIVE_BALANCE', details, message: `Balance of account ${account.account_tag} is ${balance}, below zero.` },
      { condition: 'below', fresh: previousBalance >= 0n, occurrence },
    );
  } else if (threshold > 0n && balance < threshold) {
    await enqueueAlert(
      ctx,
      {
        ...base,
        kind: 'LOW_BALANCE',
        details,
        message: `Balance of account ${account.account_tag} is ${balance}, below the alert threshold of ${threshold}.`,
      },
      { condition: 'below', fresh: previousBalance >= threshold, occurrence },
    );
  }
}
