/**
 * Error codes of the GraphQL APIs (DESIGN.md section 5), carried in `errors[].extensions.code`.
 * Resolvers throw `ServiceError`; anything else is reported as INTERNAL_ERROR without internals.
 */
export const ErrorCodes = {
  BAD_USER_INPUT: 'BAD_USER_INPUT',
  NOT_FOUND: 'NOT_FOUND',
  DUPLICATE: 'DUPLICATE',
  INVALID_REFERENCE: 'INVALID_REFERENCE',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  FORBIDDEN: 'FORBIDDEN',
  RATE_LIMITED: 'RATE_LIMITED',
  INTERNAL_ERROR: 'INTERNAL_ERROR',
} as const;

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

export const badInput = (field: string, message: string) =>
  new ServiceError(ErrorCodes.BAD_USER_INPUT, `${field}: ${message}`, { field });
