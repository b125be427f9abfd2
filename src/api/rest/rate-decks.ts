import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../shared/domain/context';
import { badInput } from '../../shared/infra/errors';
import { applyDeck, DeckError, parseEffective, type DeckReport } from '../../shared/domain/rate-decks';
import type { RatingDataCache } from '../../shared/domain/rating-data/cache';
import { tag } from '../../shared/domain/validation/text';
import { ChangeAnnouncer } from '../store/change-announcer';
import { oneQueryValue, refusedWithoutWrite, refuseUnknownParameters, registerUploadScope, uploadBody } from './uploads';

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

function readQuery(query: Record<string, unknown>): { pricelist_tag: string; carrier_tag: string; effective: Date; dryRun: boolean } {
  refuseUnknownParameters(query, ['pricelist_tag', 'carrier_tag', 'effective', 'dry_run']);
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
 * body: applies a rate deck (src/shared/domain/rate-decks, docs/RATE-DECKS.md) and answers what it did,
 * `{ added, changed, unchanged, removed, rejected: [{ line, reason }] (first 1000), rejected_count,
 * dry_run, effective }`. The body is read as a stream (up to 256 MiB). Bad input (parameters, header,
 * unknown pricelist or carrier) answers 400 in the API's error shape, before anything is written.
 * Needs the `write` scope. Not wrapped in fastify-plugin: its text/csv parser and error handler stay in
 * its own scope (./uploads.ts).
 */
export const rateDecksRoutes: FastifyPluginAsync<RateDecksOptions> = async (app, { ctx, ratingData }) => {
  const changes = new ChangeAnnouncer(ctx, 'rating-data', ratingData);

  registerUploadScope(app, {
    contentTypes: ['text/csv'],
    bodyLimit: RATE_DECK_BODY_LIMIT,
    badInput: (err) => (err instanceof DeckError ? { code: err.code, message: err.message, details: { field: err.field } } : null),
    failure: {
      log: 'rate deck failed',
      answer: 'internal error: the deck may be partly applied; sending it again finishes it',
      unavailable:
        'the rate store is unreachable: the deck may be partly applied; send it again once the service is ready (GET /ready) to finish it',
    },
  });

  app.post('/v1/rate-decks', { bodyLimit: RATE_DECK_BODY_LIMIT }, async (request, reply) => {
    if (refusedWithoutWrite(request, reply)) return reply;
    const params = readQuery(request.query as Record<string, unknown>);
    const input = uploadBody(request, reply, RATE_DECK_BODY_LIMIT, 'deck', 'text/csv');
    if (!input) return reply;
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
      ...(report.removals_skipped ? { removals_skipped: report.removals_skipped } : {}),
    };
    return reply.code(200).send(answer);
  });
};

export default rateDecksRoutes;
