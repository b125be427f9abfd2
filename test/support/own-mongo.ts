import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AppContext, createContext } from '../../src/shared/domain/context';
import type { Config } from '../../src/shared/infra/config';
import { createLogger } from '../../src/shared/infra/logger';
import { stopChild } from '../../src/shared/infra/services/redis-server';
import { serverUrls, testConfig } from './harness';
import { MongoProcess, startH2MongoServer } from './mongo-process';

/**
 * A service context on a MongoDB-wire server of its own (its data in a temp dir), for tests that stop
 * MongoDB under a running API, agent or worker and start it again on the same port with the same data.
 * Redis is the suite's, under the context's own queue prefix.
 */
export class OwnMongo {
  private constructor(
    private readonly dir: string,
    private server: MongoProcess,
    readonly config: Config,
    readonly ctx: AppContext,
  ) {}

  /** `name` prefixes the temp dir; `env` adds to the test configuration (MONGO_URL is the own server's). */
  static async start(name: string, env: Record<string, string> = {}): Promise<OwnMongo> {
    const dir = mkdtempSync(path.join(os.tmpdir(), name));
    const server = await startH2MongoServer(path.join(dir, 'db.mv'));
    const config = testConfig({ MONGO_URL: server.url, ...env });
    const ctx = await createContext(config, { mongoUrl: server.url, redisUrl: serverUrls().redisUrl }, createLogger(config, 'test'));
    return new OwnMongo(dir, server, config, ctx);
  }

  get url(): string {
    return this.server.url;
  }

  /** MongoDB goes away (SIGTERM, then SIGKILL if it lingers). */
  async stop(): Promise<void> {
    await stopChild(this.server.child);
  }

  /** MongoDB comes back where clients expect it, with its data. */
  async restart(): Promise<void> {
    this.server = await startH2MongoServer(path.join(this.dir, 'db.mv'), this.server.port);
  }

  /** The context closed, its queue keys gone, MongoDB stopped and its data removed. */
  async close(): Promise<void> {
    const keys = await this.ctx.redis.keys(`${this.ctx.config.queuePrefix}:*`);
    if (keys.length > 0) await this.ctx.redis.del(...keys);
    await this.ctx.close().catch(() => undefined);
    await stopChild(this.server.child);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
