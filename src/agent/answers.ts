import {
  type AuthorizationJob,
  type AuthorizationResult,
  type BadInputReason,
  type OperationResult,
  type Reason,
  Reasons,
} from '../shared/domain/calls';
import type { JsonSchema } from '../shared/domain/validation/fields';

/**
 * What the agent answers, in the shape of Canyan's agent (docs/DESIGN.md section 9): the worker's result
 * plus the request's own identifiers, so a proxy can match an answer to its call without keeping
 * state. The tables describe the answers to GraphQL (graphql/transactions.ts) and OpenAPI
 * (rest/openapi.ts).
 */

/** One item's answer in recordTransactions: ok, a reason of the contract, or bad input naming the field. */
export interface RecordItemResult {
  index: number;
  transaction_tag: string | null;
  ok: boolean;
  reason: Reason | BadInputReason | null;
}

export type OperationAnswer = OperationResult & {
  transaction_tag: string;
  account_tag: string;
};

export interface AuthorizationAnswer extends Omit<AuthorizationResult, 'unauthorized_account_tag'> {
  transaction_tag: string | null;
  account_tag: string;
  destination_account_tag: string | null;
  authorized_destination: boolean | null;
  unauthorized_account_tag: string | null;
}

type AnswerType = 'boolean' | 'string' | 'int' | 'strings';

export interface AnswerField {
  type: AnswerType;
  nullable: boolean;
  description: string;
}

export const answerTypes: Record<AnswerType, { graphql: string; schema: JsonSchema }> = {
  boolean: { graphql: 'Boolean', schema: { type: 'boolean' } },
  string: { graphql: 'String', schema: { type: 'string' } },
  int: { graphql: 'Int', schema: { type: 'integer' } },
  strings: { graphql: '[String!]', schema: { type: 'array', items: { type: 'string' } } },
};

const REFUSALS =
  'NOT_FOUND, NOT_ACTIVE, UNREACHABLE_DESTINATION, TOO_MANY_RUNNING_TRANSACTIONS, BALANCE_INSUFFICIENT, SPEND_LIMIT_EXCEEDED';
const FAILURES = 'BUSY, TIMEOUT, UNAVAILABLE, OUTCOME_UNKNOWN';

const accountTag: AnswerField = {
  type: 'string',
  nullable: false,
  description: 'The calling account: its tag, also when the request named it by a SIP/TEL URI',
};

export const operationAnswerFields: Record<keyof OperationAnswer, AnswerField> = {
  ok: { type: 'boolean', nullable: false, description: 'Whether the operation happened (business refusals are ok: false, not errors)' },
  reason: {
    type: 'string',
    nullable: true,
    description: `Why not: ${REFUSALS}, DUPLICATE_TRANSACTION, ALREADY_ENDED, ${FAILURES}; null when ok`,
  },
  transaction_tag: { type: 'string', nullable: false, description: 'The call, as in the request' },
  account_tag: accountTag,
};

export const authorizationAnswerFields: Record<keyof AuthorizationAnswer, AnswerField> = {
  authorized: { type: 'boolean', nullable: false, description: 'Whether the call may start now' },
  // OUTCOME_UNKNOWN is not among them: an authorization changes no money, so the agent answers UNAVAILABLE.
  unauthorized_reason: {
    type: 'string',
    nullable: true,
    description: `Why not: ${REFUSALS}, DUPLICATE_TRANSACTION (the tag names a call already running), BUSY, TIMEOUT, UNAVAILABLE; null when authorized`,
  },
  max_available_units: {
    type: 'int',
    nullable: false,
    description: 'Longest call in seconds the available balance pays for (capped at 14400)',
  },
  balance: { type: 'string', nullable: true, description: 'Balance of the calling account in minor units (decimal string, 64-bit)' },
  carriers: { type: 'strings', nullable: false, description: 'Carriers in least-cost order, as PROTOCOL:host:port' },
  transaction_tag: { type: 'string', nullable: true, description: 'The call, as in the request (null when none was given)' },
  account_tag: accountTag,
  destination_account_tag: {
    type: 'string',
    nullable: true,
    description: 'The receiving account, resolved as account_tag is; null when none was given',
  },
  authorized_destination: {
    type: 'boolean',
    nullable: true,
    description:
      "Whether the destination may be called (Canyan's field): true when authorized or refused for money (BALANCE_INSUFFICIENT, SPEND_LIMIT_EXCEEDED: every route was found first), false when refused as UNREACHABLE_DESTINATION, null when refused before the destination was decided",
  },
  unauthorized_account_tag: {
    type: 'string',
    nullable: true,
    description:
      'The account that refused the call (the caller, a linked account or the receiver); null when authorized or when no account decided (TIMEOUT, UNAVAILABLE)',
  },
};

/** One item's answer in recordTransactions, by its position in the request. */
export const recordItemAnswerFields: Record<keyof RecordItemResult, AnswerField> = {
  index: { type: 'int', nullable: false, description: "The item's position in the request, from 0" },
  transaction_tag: { type: 'string', nullable: true, description: "The item's transaction_tag when it was a string" },
  ok: operationAnswerFields.ok,
  reason: { type: 'string', nullable: true, description: 'As recordTransaction, or BAD_USER_INPUT: <field>: <problem>; null when ok' },
};

/** The answer to begin, end, record or rollback: the worker's result and the call it is about. */
export function operationAnswer(job: { transaction_tag: string; account_tag: string }, result: OperationResult): OperationAnswer {
  return { ...result, transaction_tag: job.transaction_tag, account_tag: job.account_tag };
}

export function authorizationAnswer(job: AuthorizationJob, result: AuthorizationResult): AuthorizationAnswer {
  return {
    authorized: result.authorized,
    unauthorized_reason: result.unauthorized_reason,
    max_available_units: result.max_available_units,
    balance: result.balance,
    carriers: result.carriers,
    transaction_tag: job.transaction_tag,
    account_tag: job.account_tag,
    destination_account_tag: job.destination_account_tag,
    // A boolean, as Canyan's agent answers it, so its typed clients read it unchanged.
    authorized_destination: destinationVerdict(result),
    // A worker of an older version does not set it: null, not a missing member, in the JSON answer.
    unauthorized_account_tag: result.unauthorized_account_tag ?? null,
  };
}

/**
 * Refusals the worker gives only after every party's route to the destination was found (the grant's:
 * authorization.ts). TOO_MANY_RUNNING_TRANSACTIONS is not one: a party's limit may refuse before the
 * parties after it are routed.
 */
const AFTER_ROUTING: ReadonlySet<string | null> = new Set([Reasons.BALANCE_INSUFFICIENT, Reasons.SPEND_LIMIT_EXCEEDED]);

/**
 * Whether the destination may be called: true when authorized or refused for money (every route was
 * found first), false when unreachable, null when refused before the destination was decided.
 */
function destinationVerdict(result: Pick<AuthorizationResult, 'authorized' | 'unauthorized_reason'>): boolean | null {
  if (result.authorized) return true;
  if (result.unauthorized_reason === Reasons.UNREACHABLE_DESTINATION) return false;
  return AFTER_ROUTING.has(result.unauthorized_reason) ? true : null;
}
