import { Readable, Transform } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { badInput, type ErrorCode, ErrorCodes, ServiceError } from '../../shared/infra/errors';
import { sendError } from '../../shared/infra/http/error-reply';
import { isStoreUnreachable } from '../../shared/infra/store-errors';

/**
 * What the API's file uploads (rate decks, CDR files) share: the body stays a stream of bounded size,
 * query parameters are checked by name, the `write` scope is required, and errors answer in the API's
 * error shape. Each upload is a plugin of its own; these helpers run in its scope.
 */

export class BodyTooLarge extends Error {
  readonly statusCode = 413;
}

/** Counts the bytes of the body and fails the stream past the limit. */
function limited(limit: number, what: string): Transform {
  let bytes = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      if (bytes > limit) done(new BodyTooLarge(`the ${what} is larger than ${limit} bytes`));
      else done(null, chunk);
    },
  });
}

/** A query parameter given at most once (`?a=1&a=2` is refused). */
export function oneQueryValue(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw badInput(name, 'must be given once');
  return value;
}

/** Refuses a parameter the route does not know, so a typo is never silently ignored. */
export function refuseUnknownParameters(query: Record<string, unknown>, known: readonly string[]): void {
  const unknown = Object.keys(query).find((k) => !known.includes(k));
  if (unknown !== undefined) throw badInput(unknown, `unknown parameter (known: ${known.join(', ')})`);
}

export interface UploadScope {
  /** Media types the body may have; the body is handed over as a stream. */
  contentTypes: string[];
  /** Largest body, bytes. */
  bodyLimit: number;
  /** The upload's own parse errors, answered 400 (beside ServiceError); null for any other error. */
  badInput?: (err: Error) => { code: ErrorCode; message: string; details?: Record<string, unknown> } | null;
  /** Logged, and said to the client, when something unexpected fails (`answer`) or a store is unreachable (`unavailable`). */
  failure: { log: string; answer: string; unavailable: string };
}

/** Registers the streaming body parser and the error handler of an upload plugin's scope. */
export function registerUploadScope(app: FastifyInstance, scope: UploadScope): void {
  app.addContentTypeParser(scope.contentTypes, { bodyLimit: scope.bodyLimit }, (_request, payload, done) => done(null, payload));
  app.setErrorHandler((err: FastifyError | Error, request, reply: FastifyReply) => {
    const own = scope.badInput?.(err);
    if (own) return sendError(reply, 400, own.code, own.message, own.details);
    if (err instanceof ServiceError) return sendError(reply, 400, err.code, err.message, err.details);
    if (err instanceof BodyTooLarge) return sendError(reply, 413, ErrorCodes.BAD_USER_INPUT, err.message);
    const status = (err as { statusCode?: number }).statusCode;
    if (status !== undefined && status >= 400 && status < 500) return sendError(reply, status, ErrorCodes.BAD_USER_INPUT, err.message);
    if (isStoreUnreachable(err)) {
      request.log.warn({ err }, `${scope.failure.log}: a store is unreachable`);
      void reply.header('retry-after', '5');
      return sendError(reply, 503, ErrorCodes.INTERNAL_ERROR, scope.failure.unavailable);
    }
    request.log.error({ err }, scope.failure.log);
    return sendError(reply, 500, ErrorCodes.INTERNAL_ERROR, scope.failure.answer);
  });
}

/** Sends 403 and answers true without the `write` scope: whatever the access policy says, an upload changes data. */
export function refusedWithoutWrite(request: FastifyRequest, reply: FastifyReply): boolean {
  const principal = (request as { principal?: { scopes: ReadonlySet<string> } | null }).principal;
  if (!principal || principal.scopes.has('write')) return false;
  void sendError(reply, 403, ErrorCodes.FORBIDDEN, 'This request needs the "write" scope', { requiredScopes: ['write'] });
  return true;
}

/**
 * The upload's body as a stream of at most `limit` bytes, or null once a 415 (another media type) is
 * sent. A declared Content-Length over the limit is refused before reading.
 */
export function uploadBody(request: FastifyRequest, reply: FastifyReply, limit: number, what: string, mediaTypes: string): Readable | null {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw new BodyTooLarge(`the ${what} is larger than ${limit} bytes`);
  if (!(request.body instanceof Readable) && request.body !== undefined && request.body !== null) {
    void sendError(reply, 415, ErrorCodes.BAD_USER_INPUT, `the ${what} must be sent as a ${mediaTypes} body`);
    return null;
  }
  const body = request.body instanceof Readable ? request.body : Readable.from([]);
  const bounded = body.pipe(limited(limit, what));
  body.on('error', (err) => bounded.destroy(err));
  return bounded;
}
