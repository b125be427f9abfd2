import type { FastifyReply } from 'fastify';
import type { ErrorCode } from '../errors';

/**
 * Errors raised before GraphQL runs (authentication, scopes, rate limits) are answered in the
 * GraphQL error shape on every route, REST included, so clients parse one format:
 * `{ errors: [{ message, extensions: { code, ... } }] }`.
 */
export function sendError(
  reply: FastifyReply,
  status: number,
  code: ErrorCode,
  message: string,
  extensions: Record<string, unknown> = {},
): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'application/json; charset=utf-8')
    .send({ errors: [{ message, extensions: { code, ...extensions } }] });
}
