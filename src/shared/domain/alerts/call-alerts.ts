import type { AppContext } from '../context';
import type { RunningTransaction } from '../types';
import { type Reason, Reasons } from '../calls';
import { enqueueAlert, ONCE } from './enqueue';
import { AlertRecipient, recipientOf } from './recipients';

/** Refusal reasons worth telling the account about (docs/DESIGN.md section 6); others are the caller's mistakes. */
export const ALERTED_REFUSALS: ReadonlySet<Reason> = new Set([
  Reasons.BALANCE_INSUFFICIENT,
  Reasons.TOO_MANY_RUNNING_TRANSACTIONS,
  Reasons.SPEND_LIMIT_EXCEEDED,
]);

/** A transaction-scoped condition is remembered this long: in practice, once per call. */
const ONCE_PER_CALL_SECONDS = 7 * 86400;

/**
 * A call refused for balance or concurrency. The same reason for the same account alerts once per
 * ALERT_REPEAT_SECONDS (a customer retrying a refused call must not flood the inbox); a different
 * reason alerts at once. Never rejects.
 */
export async function refusalAlert(
  ctx: AppContext,
  account: AlertRecipient,
  call: { transaction_tag: string | null; destination: string | null; reason: Reason },
): Promise<void> {
  if (!ALERTED_REFUSALS.has(call.reason)) return;
  const what =
    call.reason === Reasons.BALANCE_INSUFFICIENT
      ? 'the balance is insufficient'
      : call.reason === Reasons.SPEND_LIMIT_EXCEEDED
        ? 'its spend limits leave nothing for it'
        : 'too many calls are running';
  await enqueueAlert(
    ctx,
    {
      kind: 'CALL_REFUSED',
      account_tag: account.account_tag,
      // Kept out of the dedupe key: the condition is per account, not per attempt.
      transaction_tag: null,
      ...recipientOf(account),
      message: `A call of account ${account.account_tag}${call.destination ? ` to ${call.destination}` : ''} was refused: ${what}.`,
      details: { reason: call.reason, transaction_tag: call.transaction_tag, destination: call.destination },
      at: new Date().toISOString(),
    },
    // Remembered per reason (docs/OPERATIONS.md: once per account and reason within the period): under
    // one key holding the last reason, refusals alternating between two reasons alerted every time.
    { condition: call.reason, occurrence: call.transaction_tag ?? new Date().toISOString(), call: call.reason },
  );
}

/** A call in progress for longer than LONG_CALL_SECONDS: once per call. Never rejects. */
export async function longCallAlert(ctx: AppContext, account: AlertRecipient, entry: RunningTransaction, now: Date): Promise<void> {
  const seconds = Math.floor((now.getTime() - entry.timestamp_begin.getTime()) / 1000);
  await enqueueAlert(
    ctx,
    {
      kind: 'LONG_RUNNING_CALL',
      account_tag: account.account_tag,
      transaction_tag: entry.transaction_tag,
      ...recipientOf(account),
      message: `Call ${entry.transaction_tag} of account ${account.account_tag} to ${entry.destination} has been running for ${seconds} s.`,
      details: {
        destination: entry.destination,
        source: entry.source,
        inbound: entry.inbound,
        timestamp_begin: entry.timestamp_begin.toISOString(),
        running_seconds: seconds,
      },
      at: now.toISOString(),
    },
    { condition: 'long', occurrence: ONCE, rememberSeconds: ONCE_PER_CALL_SECONDS, call: entry.id },
  );
}

/**
 * "End this call": a prepaid call whose cost has used up the available balance. It is meant for
 * the switch, not the customer, so it goes to the webhook only. Once per call. Never rejects.
 */
export async function endCallAlert(
  ctx: AppContext,
  call: {
    account_tag: string;
    transaction_tag: string;
    /** The running entry's id: the call, which its tag alone does not name. */
    entry_id: string;
    /** Whose call it is: the caller, also on a linked parent's share of it. */
    caller_account_tag: string;
    available_balance: bigint;
    destination?: string | null;
  },
  now: Date = new Date(),
): Promise<void> {
  await enqueueAlert(
    ctx,
    {
      kind: 'END_CALL',
      account_tag: call.account_tag,
      transaction_tag: call.transaction_tag,
      email: null,
      mobile: null,
      message: `End call ${call.transaction_tag} of account ${call.account_tag}: its cost has used up the available balance.`,
      details: {
        available_balance: call.available_balance.toString(),
        destination: call.destination ?? null,
        caller_account_tag: call.caller_account_tag,
      },
      at: now.toISOString(),
    },
    { condition: 'exhausted', occurrence: ONCE, rememberSeconds: ONCE_PER_CALL_SECONDS, call: call.entry_id },
  );
}
