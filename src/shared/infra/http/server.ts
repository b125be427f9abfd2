import Fastify, { FastifyBaseLogger, FastifyInstance, LogController } from 'fastify';
import { AccessPolicy, openAccess } from '../auth/access';
import type { ServiceContext } from '../service-context';
import authPlugin from './auth-plugin';
import healthPlugin from './health-plugin';
import metricsPlugin, { type HttpMetrics } from './metrics-plugin';
import rateLimitPlugin from './rate-limit-plugin';

export interface HttpServerOptions {
  /** Label of this server in metrics and rate-limit counters. */
  name: 'api' | 'agent' | 'worker';
  /** What /metrics serves: the process's registry (metricsFor(ctx), src/shared/domain/metrics). */
  metrics: HttpMetrics;
  /** Who may call which route; the default leaves every route open (the worker's probe server). */
  access?: AccessPolicy;
  /**
   * Request and response log lines at debug level instead of info: the agent answers hundreds of
   * requests a second on the call-setup path, where two info lines per request cost real CPU
   * (issue 12). Its metrics still count every request; errors are logged where they happen.
   */
  quietRequests?: boolean;
}

/**
 * A Fastify instance with what every HTTP process shares: pino request logging, the body size
 * limit, health routes and /metrics, and (with an access policy) authentication and the rate limit.
 * Authentication is registered first so the rate limit can count per token.
 */
export async function createHttpServer(ctx: ServiceContext, options: HttpServerOptions): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    loggerInstance: ctx.logger as FastifyBaseLogger,
    bodyLimit: ctx.config.bodyLimitBytes,
    requestIdHeader: 'x-request-id',
    // Fastify 5.12's logController replaces the top-level disableRequestLogging (deprecated, FSTDEP023).
    ...(options.quietRequests ? { logController: new LogController({ disableRequestLogging: true }) } : {}),
  });
  if (options.quietRequests) {
    const debug = ctx.logger.isLevelEnabled('debug');
    app.addHook('onResponse', async (request, reply) => {
      if (debug)
        request.log.debug({ url: request.url, statusCode: reply.statusCode, responseTime: reply.elapsedTime }, 'request completed');
    });
  }
  await app.register(metricsPlugin, { metrics: options.metrics, server: options.name });
  if (options.access && options.access !== openAccess) {
    await app.register(authPlugin, { ctx, policy: options.access });
    await app.register(rateLimitPlugin, { ctx, server: options.name });
  }
  await app.register(healthPlugin, { ctx });
  return app;
}
