import { Readable, Transform } from 'node:stream';
import type { FastifyError, FastifyPluginAsync, FastifyReply } from 'fastify';
import type { AppContext } from '../../shared/context';
import { ErrorCodes, ServiceError, badInput } from '../../shared/errors';
import { sendError } from '../../shared/http/error-reply';
import { applyDeck, DeckError, parseEffective, type DeckReport } from '../../shared/rate-decks';
import type { RatingDataCache } from '../../shared/rating-data/cache';
import { tag } from '../../shared/validation/text';
import { RatingDataChanges } from '../store/rating-data-changes';

/** Largest deck accepted over HTTP (a 100,000-prefix deck is a few MB). */
export const RATE_DECK_BODY_LIMIT = 256 * 1024 * 1024;

/** Rejected lines listed in an answer; `rejected_count` counts them all. */
const REJECTED_LISTED = 1000;

export interface RateDecksOptions {
  /** The API's context (its MongoDB pool, Redis, configuration, logger). */
  ctx: AppContext;
  /** The API's own rating index, rebuilt on its next use after a deck wrote (others hear the Redis announcement). */
  ratingData?: Pick<RatingDataCache, 'invalidate'>;
}

export type RateDeckAnswer = Omit<DeckReport, 'lines'>;

class BodyTooLarge extends Error {
  readonly statusCode = 413;
}

/** Counts the bytes of the body and fails the stream past the limit. */
function limited(limit: number): Transform {
  let bytes = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      if (bytes > limit) done(new BodyTooLarge(`the deck is larger than ${limit} bytes`));
      else done(null, chunk);
    },
  });
}

function oneQueryValue(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw badInput(name, 'must be given once');
  return value;
}

function readQuery(query: Record<string, unknown>): { pricelist_tag: string; carrier_tag: string; effective: Date; dryRun: boolean } {
  const known = new Set(['pricelist_tag', 'carrier_tag', 'effective', 'dry_run']);
  const unknown = Object.keys(query).find((k) => !known.has(k));
  if (unknown !== undefined) throw badInput(unknown, 'unknown parameter (known: pricelist_tag, carrier_tag, effective, dry_run)');
  const pricelist = oneQueryValue(query, 'pricelist_tag');
  const carrier = oneQueryValue(query, 'carrier_tag');
  if (pricelist === undefined) throw badInput('pricelist_tag', 'is required');
  if (carrier === undefined) throw badInput('carrier_tag', 'is required');
  const effectiveText = oneQueryValue(query, 'effective');
  let effective = new Date();
  if (effectiveText !== undefined) {
    const parsed = parseEffective(effectiveText);
    if (!parsed) throw badInput('effective', 'must be an ISO 8601 datetime like 2026-07-01T00:00:00Z');
    effective = parsed;
  }
  const dryRun = oneQueryValue(query, 'dry_run');
  if (dryRun !== undefined && dryRun !== 'true' && dryRun !== 'false') throw badInput('dry_run', 'must be true or false');
  return { pricelist_tag: tag('pricelist_tag', pricelist), carrier_tag: tag('carrier_tag', carrier), effective, dryRun: dryRun === 'true' };
}

/**
 * `POST /v1/rate-decks?pricelist_tag=P&carrier_tag=C&effective=T&dry_run=true|false` with a `text/csv`
 * body: applies a rate deck (src/shared/rate-decks, docs/RATE-DECKS.md) and answers what it did,
 * `{ added, changed, unchanged, removed, rejected: [{ line, reason }] (first 1000), rejected_count,
 * dry_run, effective }`. The body is read as a stream (up to 256 MiB). Bad input (parameters, header,
 * unknown pricelist or carrier) answers 400 in the API's error shape, before anything is written.
 * Needs the `write` scope. Not wrapped in fastify-plugin: its text/csv parser and error handler stay in
 * its own scope.
 */
export const rateDecksRoutes: FastifyPluginAsync<RateDecksOptions> = async (app, { ctx, ratingData }) => {
  const changes = new RatingDataChanges(ctx, ratingData ?? { invalidate: () => undefined });

  // The body stays a stream: applyDeck reads it chunk by chunk (bodyLimit is enforced by `limited`).
  app.addContentTypeParser('text/csv', { bodyLimit: RATE_DECK_BODY_LIMIT }, (_request, payload, done) => done(null, payload));

  app.setErrorHandler((err: FastifyError | Error, request, reply: FastifyReply) => {
    if (err instanceof DeckError) return sendError(reply, 400, err.code, err.message, { field: err.field });
    if (err instanceof ServiceError) return sendError(reply, 400, err.code, err.message, err.details);
    if (err instanceof BodyTooLarge) return sendError(reply, 413, ErrorCodes.BAD_USER_INPUT, err.message);
    const status = (err as { statusCode?: number }).statusCode;
    if (status !== undefined && status >= 400 && status < 500) return sendError(reply, status, ErrorCodes.BAD_USER_INPUT, err.message);
    request.log.error({ err }, 'rate deck failed');
    return sendError(reply, 500, ErrorCodes.INTERNAL_ERROR, 'internal error: the deck may be partly applied; sending it again finishes it');
  });

  app.post('/v1/rate-decks', { bodyLimit: RATE_DECK_BODY_LIMIT }, async (request, reply) => {
    // The lead's access policy decides who reaches the route; writing rates needs `write` whatever it says.
    const principal = (request as { principal?: { scopes: ReadonlySet<string> } | null }).principal;
    if (principal && !principal.scopes.has('write')) {
      return sendError(reply, 403, ErrorCodes.FORBIDDEN, 'This request needs the "write" scope', { requiredScopes: ['write'] });
    }
    const params = readQuery(request.query as Record<string, unknown>);
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > RATE_DECK_BODY_LIMIT) throw new BodyTooLarge(`the deck is larger than ${RATE_DECK_BODY_LIMIT} bytes`);
    if (!(request.body instanceof Readable) && request.body !== undefined && request.body !== null) {
      return sendError(reply, 415, ErrorCodes.BAD_USER_INPUT, 'the deck must be sent as a text/csv body');
    }
    const body = request.body instanceof Readable ? request.body : Readable.from([]);
    const input = body.pipe(limited(RATE_DECK_BODY_LIMIT));
    body.on('error', (err) => input.destroy(err));
    const report = await applyDeck(ctx.mongo.collections, input, {
      pricelist_tag: params.pricelist_tag,
      carrier_tag: params.carrier_tag,
      effective: params.effective,
      dryRun: params.dryRun,
      keepRejected: REJECTED_LISTED,
      announce: () => changes.announce(),
    });
    const answer: RateDeckAnswer = {
      added: report.added,
      changed: report.changed,
      unchanged: report.unchanged,
      removed: report.removed,
      rejected: report.rejected,
      rejected_count: report.rejected_count,
      dry_run: report.dry_run,
      effective: report.effective,
    };
    return reply.code(200).send(answer);
  });
};

export default rateDecksRoutes;
