import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../service-context';
import { ErrorCodes } from '../errors';
import { sendError } from './error-reply';
import { leasedRedisStore } from './leased-rate-store';

export interface RateLimitPluginOptions {
  ctx: ServiceContext;
  /** Separates the counters of the API and the agent when one token may call both. */
  server: string;
}

/** Per token (per IP for the anonymous caller of an open development setup). */
function limitKey(request: FastifyRequest): string {
  const principal = request.principal;
  return principal && principal.source !== 'open' ? `token:${principal.id}` : `ip:${request.ip}`;
}

/**
 * RATE_LIMIT_MAX requests per RATE_LIMIT_WINDOW_MS, counted in Redis so every process of a role
 * shares one budget per token (claimed in blocks of a hundredth, leased-rate-store.ts). Runs after
 * authentication (it needs the principal) and skips open routes (probes and scrapes). Over the limit: RATE_LIMITED, HTTP 429, Retry-After in seconds.
 * If Redis fails the request is let through: rate limiting protects the service, it must not
 * become the reason it is down.
 */
const rateLimitPlugin: FastifyPluginAsync<RateLimitPluginOptions> = async (app, { ctx, server }) => {
  const { rateLimitMax: max, rateLimitWindowMs: windowMs } = ctx.config;
  if (max === 0) return;
  // The limit is set here, where the plugin is registered, and the checker is made without options:
  // `createRateLimit(options)` makes a per-route child store whose keys carry the route's method and
  // URL, which a checker made outside a route does not have (keys read `...:undefinedundefined-token:...`).
  // Keys: `<prefix>:rate-limit:<server>:<token or ip>`, one key per counter (INCRBY + PEXPIRE in one
  // single-key script), so they spread over a Redis Cluster's slots and need no hash tag. Claimed a
  // hundredth of the budget at a time (leased-rate-store.ts): not a Redis round trip per request.
  await app.register(rateLimit, {
    global: false,
    store: leasedRedisStore(ctx.redis, `${ctx.config.queuePrefix}:rate-limit:${server}:`),
    max,
    timeWindow: windowMs,
    keyGenerator: limitKey,
    skipOnError: true,
  });
  const check = app.createRateLimit();

  app.addHook('onRequest', async (request, reply) => {
    if (request.principal === null) return;
    const result = await check(request);
    if (result.isAllowed) return;
    reply.header('x-ratelimit-limit', max).header('x-ratelimit-remaining', result.remaining);
    if (!result.isExceeded) return;
    const retryAfter = Math.max(1, result.ttlInSeconds);
    reply.header('retry-after', retryAfter);
    return sendError(
      reply,
      429,
      ErrorCodes.RATE_LIMITED,
      `Rate limit of ${max} requests per ${windowMs} ms exceeded; retry in ${retryAfter} s`,
      {
        retryAfter,
        limit: max,
        windowMs,
      },
    );
  });
};

export default fp(rateLimitPlugin, { name: 'rate-limit', dependencies: ['auth'] });
