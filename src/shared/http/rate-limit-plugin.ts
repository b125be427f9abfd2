import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { AppContext } from '../context';
import { ErrorCodes } from '../errors';
import { sendError } from './error-reply';

export interface RateLimitPluginOptions {
  ctx: AppContext;
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
 * shares one budget per token. Runs after authentication (it needs the principal) and skips open
 * routes (probes and scrapes). Over the limit: RATE_LIMITED, HTTP 429, Retry-After in seconds.
 * If Redis fails the request is let through: rate limiting protects the service, it must not
 * become the reason it is down.
 */
const rateLimitPlugin: FastifyPluginAsync<RateLimitPluginOptions> = async (app, { ctx, server }) => {
  const { rateLimitMax: max, rateLimitWindowMs: windowMs } = ctx.config;
  if (max === 0) return;
  await app.register(rateLimit, {
    global: false,
    redis: ctx.redis,
    nameSpace: `${ctx.config.queuePrefix}:rate-limit:${server}:`,
    skipOnError: true,
  });
  const check = app.createRateLimit({ max, timeWindow: windowMs, keyGenerator: limitKey, skipOnError: true });

  app.addHook('onRequest', async (request, reply) => {
    if (request.principal === null) return;
    const result = await check(request);
    if (result.isAllowed) return;
    reply.header('x-ratelimit-limit', max).header('x-ratelimit-remaining', result.remaining);
    if (!result.isExceeded) return;
    const retryAfter = Math.max(1, result.ttlInSeconds);
    reply.header('retry-after', retryAfter);
    return sendError(reply, 429, ErrorCodes.RATE_LIMITED, `Rate limit of ${max} requests per ${windowMs} ms exceeded; retry in ${retryAfter} s`, {
      retryAfter,
      limit: max,
      windowMs,
    });
  });
};

export default fp(rateLimitPlugin, { name: 'rate-limit', dependencies: ['auth'] });
