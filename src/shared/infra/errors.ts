/**
 * Every error code the service answers with, and its HTTP status: the one declaration of errors
 * (docs/DESIGN.md section 5), as the call contract's refusals are declared in src/shared/domain/calls/reasons.ts.
 * An error is a request the service would not run (bad input, no right to it, a store it cannot
 * reach); a refusal is an answer about a call (`ok: false`). Carried in `errors[].extensions.code`
 * (GraphQL) or `error.code` (REST).
 */
export const ErrorCodes = {
  /** A field is missing, malformed or out of range; `field` names it. HTTP 400. */
  BAD_USER_INPUT: 'BAD_USER_INPUT',
  /** The document asked for does not exist. HTTP 404 before execution, 200 from a resolver. */
  NOT_FOUND: 'NOT_FOUND',
  /** A unique key (a tag) is already taken; `field` names it. */
  DUPLICATE: 'DUPLICATE',
  /** A reference to another document that does not exist, or a change its references forbid. */
  INVALID_REFERENCE: 'INVALID_REFERENCE',
  /** No token, or an unknown one. HTTP 401. */
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  /** The token lacks the scope. HTTP 403. */
  FORBIDDEN: 'FORBIDDEN',
  /** Over RATE_LIMIT_MAX, or no turn within API_QUERY_WAIT_MS. HTTP 429. */
  RATE_LIMITED: 'RATE_LIMITED',
  /** A bug: the message is generic, the error itself goes to the log only. HTTP 500. */
  INTERNAL_ERROR: 'INTERNAL_ERROR',
} as const;

/** Codes of GraphQL requests that could not run at all (never raised by resolvers); all HTTP 400. */
export const RequestErrorCodes = {
  /** Not GraphQL. */
  GRAPHQL_PARSE_FAILED: 'GRAPHQL_PARSE_FAILED',
  /** GraphQL, but not valid against the schema, or over the request limits. */
  GRAPHQL_VALIDATION_FAILED: 'GRAPHQL_VALIDATION_FAILED',
  /** Refused before running: unknown operationName, two unnamed operations, a subscription. */
  BAD_REQUEST: 'BAD_REQUEST',
} as const;

/** HTTP status of a request refused before execution, by code. */
export const HTTP_STATUS_OF_CODE: Readonly<Record<string, number>> = {
  [ErrorCodes.BAD_USER_INPUT]: 400,
  [ErrorCodes.UNAUTHENTICATED]: 401,
  [ErrorCodes.FORBIDDEN]: 403,
  [ErrorCodes.NOT_FOUND]: 404,
  [ErrorCodes.RATE_LIMITED]: 429,
  [ErrorCodes.INTERNAL_ERROR]: 500,
  [RequestErrorCodes.GRAPHQL_PARSE_FAILED]: 400,
  [RequestErrorCodes.GRAPHQL_VALIDATION_FAILED]: 400,
  [RequestErrorCodes.BAD_REQUEST]: 400,
};

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

export class ServiceError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra members of `extensions` (for BAD_USER_INPUT: `field`). */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

export const badInput = (field: string, message: string) => new ServiceError(ErrorCodes.BAD_USER_INPUT, `${field}: ${message}`, { field });
