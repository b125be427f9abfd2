/**
 * Every reason an agent operation answers `ok: false` (or an authorization `authorized: false`) with:
 * the one declaration the agent, the workers, alerts and imports all use (docs/AGENT.md, "Refusal
 * reasons"). Ordered as a proxy meets them: what is wrong with the parties, the destination, the
 * limits, the call itself; then what is wrong with the engine, not the call. A client tells the two
 * groups apart: a refusal is final for that request, an engine failure is safe to send again.
 */
export const Reasons = {
  // ---- Refusals: nothing changed, and sending the same request again changes nothing.

  /** An account of the call (caller, linked account, receiver) does not exist; end or rollback of an unknown call. */
  NOT_FOUND: 'NOT_FOUND',
  /** An account of the call is inactive. */
  NOT_ACTIVE: 'NOT_ACTIVE',
  /** No valid rate with an active carrier matches the destination. */
  UNREACHABLE_DESTINATION: 'UNREACHABLE_DESTINATION',
  /** An account's `max_concurrent_transactions` slots are held (running calls and others' reservations). */
  TOO_MANY_RUNNING_TRANSACTIONS: 'TOO_MANY_RUNNING_TRANSACTIONS',
  /** Prepaid: the available balance cannot pay the connect fee plus the first increment (or one second, with the headroom). */
  BALANCE_INSUFFICIENT: 'BALANCE_INSUFFICIENT',
  /**
   * An account's spend limits leave nothing for the call: its max_call_cost cannot pay the first increment, or
   * its hourly or daily limit is spent (what it was charged in the window plus what its running calls hold).
   */
  SPEND_LIMIT_EXCEEDED: 'SPEND_LIMIT_EXCEEDED',
  /** The call (caller, tag) is already running or recorded. To a re-send after an unknown outcome: the first attempt happened. */
  DUPLICATE_TRANSACTION: 'DUPLICATE_TRANSACTION',
  /** End of a call already ended. To a re-send after an unknown outcome: the first attempt happened. */
  ALREADY_ENDED: 'ALREADY_ENDED',

  // ---- Engine failures: the answer says what happened to the operation, not what is wrong with it.

  /** An account changed under the worker 200 times in a row; nothing changed. Send again. */
  BUSY: 'BUSY',
  /** No worker answered within AGENT_TIMEOUT_MS; recorded abandoned first, so nothing changed or will. Send again. */
  TIMEOUT: 'TIMEOUT',
  /** Redis unreachable, or a worker failed midway and took its changes back; nothing changed or will. Send again. */
  UNAVAILABLE: 'UNAVAILABLE',
  /**
   * The agent could neither learn the operation's fate nor record it abandoned within AGENT_ABANDON_MS
   * (MongoDB unreachable from the agent): it may have happened. The same request sent again answers it.
   */
  OUTCOME_UNKNOWN: 'OUTCOME_UNKNOWN',
} as const;

export type Reason = (typeof Reasons)[keyof typeof Reasons];

/** The reasons after which the same request may, and should, be sent again. */
export const ENGINE_FAILURES: ReadonlySet<Reason> = new Set([Reasons.BUSY, Reasons.TIMEOUT, Reasons.UNAVAILABLE, Reasons.OUTCOME_UNKNOWN]);

/** A refusal of one item of a batch (recordTransactions, an import line) for bad input: `BAD_USER_INPUT: <field>: <problem>`. */
export type BadInputReason = `BAD_USER_INPUT: ${string}`;

/** The reason of a batch item or import line refused for bad input. */
export const badInputReason = (problem: string): BadInputReason => `BAD_USER_INPUT: ${problem}`;

/** Whether a reason is already a bad-input reason (`BAD_USER_INPUT: ...`). */
export const isBadInputReason = (reason: string): reason is BadInputReason => reason.startsWith('BAD_USER_INPUT: ');

/** A bad-input reason's field and problem (`BAD_USER_INPUT: <field>: <problem>`), or null. */
export function badInputField(reason: string): { field: string; problem: string } | null {
  const m = /^BAD_USER_INPUT: ([a-z_]+): /.exec(reason);
  return m ? { field: m[1], problem: reason.slice(m[0].length) } : null;
}
