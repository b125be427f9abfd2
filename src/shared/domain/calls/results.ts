import type { Reason } from './reasons';

/** The answer of begin, end, record and rollback: ok, or why not. */
export type OperationResult = { ok: true; reason: null } | { ok: false; reason: Reason };

/** The answer of authorization. */
export interface AuthorizationResult {
  authorized: boolean;
  unauthorized_reason: Reason | null;
  max_available_units: number;
  /** The caller's balance (decimal string); null when no account was read. */
  balance: string | null;
  /** The carriers the call may go out on, in order (`PROTOCOL:host:port`). */
  carriers: string[];
  /** The party that refused (caller, a linked parent, or the receiving account); null when authorized. */
  unauthorized_account_tag: string | null;
}

// One constructor for each answer shape: every answer of the engine is built by one of these.

export const done = (): OperationResult => ({ ok: true, reason: null });

export const refused = (reason: Reason): OperationResult => ({ ok: false, reason });

export function authorized(units: number, balance: string | null, carriers: string[]): AuthorizationResult {
  return { authorized: true, unauthorized_reason: null, max_available_units: units, balance, carriers, unauthorized_account_tag: null };
}

/** A refused authorization: by a party (`by`), or by the engine (TIMEOUT, UNAVAILABLE: no party, no balance read). */
export function notAuthorized(
  reason: Reason,
  by: { account_tag: string | null; balance: string | null; carriers: string[] } = { account_tag: null, balance: null, carriers: [] },
): AuthorizationResult {
  return {
    authorized: false,
    unauthorized_reason: reason,
    max_available_units: 0,
    balance: by.balance,
    carriers: by.carriers,
    unauthorized_account_tag: by.account_tag,
  };
}
