import type { FastifyInstance } from 'fastify';
import { AppContext, createContext } from '../../src/shared/domain/context';
import { createLogger } from '../../src/shared/infra/logger';
import { startRedisServer, type RunningServer } from '../../src/shared/infra/services/redis-server';
import { serverUrls, testConfig, uniqueName } from './harness';

/**
 * A service context on a redis-server of its own, with an HTTP app (the API or the agent) listening on a
 * free port, for tests that stop Redis under it. MongoDB is the suite's, under a database of its own.
 */
export class OwnRedis {
  private constructor(
    private readonly redis: RunningServer,
    readonly ctx: AppContext,
    readonly app: FastifyInstance,
    readonly url: string,
  ) {}

  /** `name` names the database; `env` adds to the test configuration; `build` makes the app from the context. */
  static async start(name: string, env: Record<string, string>, build: (ctx: AppContext) => Promise<FastifyInstance>): Promise<OwnRedis> {
    const redis = await startRedisServer({ host: '127.0.0.1' });
    const config = testConfig({ MONGO_DB: uniqueName(name), ...env });
    const ctx = await createContext(config, { mongoUrl: serverUrls().mongoUrl, redisUrl: redis.url }, createLogger(config, 'test'));
    const app = await build(ctx);
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    return new OwnRedis(redis, ctx, app, url);
  }

  /** Stops the redis-server, as an outage does. */
  stopRedis(): Promise<void> {
    return this.redis.stop();
  }

  /**
   * Closes everything, Redis stopped or not. The sockets of requests whose clients left are not idle to
   * the server: closed first, or the close waits for Fastify's keep-alive timeout (72 s).
   */
  async close(): Promise<void> {
    this.app.server.closeAllConnections();
    await this.app.close();
    await this.ctx.mongo.db.dropDatabase().catch(() => undefined);
    await this.ctx.close().catch(() => undefined);
    await this.redis.stop();
  }
}
