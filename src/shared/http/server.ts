import Fastify, { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { AppContext } from '../context';
import healthPlugin from './health-plugin';

/** A Fastify instance with what every HTTP process shares: pino request logging, health routes. */
export async function createHttpServer(ctx: AppContext): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    loggerInstance: ctx.logger as FastifyBaseLogger,
    bodyLimit: 1024 * 1024,
    requestIdHeader: 'x-request-id',
  });
  await app.register(healthPlugin, { ctx });
  return app;
}
