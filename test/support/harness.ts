import { randomBytes } from 'node:crypto';
import { Config, loadConfig } from '../../src/shared/infra/config';
import { AppContext, createContext } from '../../src/shared/domain/context';
import { createLogger } from '../../src/shared/infra/logger';
import { deleteKeys, keysEverywhere } from '../../src/shared/infra/redis';

/** A name no other test file uses: each file gets its own database and queue prefix. */
export function uniqueName(kind: string): string {
  return `${kind}_${randomBytes(6).toString('hex')}`;
}

export function serverUrls(): { mongoUrl: string; redisUrl: string } {
  const mongoUrl = process.env.MONGO_URL;
  const redisUrl = process.env.REDIS_URL;
  if (!mongoUrl || !redisUrl) throw new Error('MONGO_URL/REDIS_URL not set: run the tests through jest (global setup starts the servers)');
  return { mongoUrl, redisUrl };
}

/** `REDIS_CLUSTER_NODES` in the overrides runs the context on that Redis Cluster instead of the test server. */
export function testConfig(overrides: Record<string, string> = {}): Config {
  const { mongoUrl, redisUrl } = serverUrls();
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    MONGO_URL: mongoUrl,
    REDIS_URL: redisUrl,
    MONGO_DB: uniqueName('test'),
    QUEUE_PREFIX: uniqueName('q'),
    API_PORT: '0',
    AGENT_PORT: '0',
    ...overrides,
  };
  if (overrides.REDIS_CLUSTER_NODES) delete env.REDIS_URL;
  return loadConfig(env);
}

export interface TestContext extends AppContext {
  /** Drops the database and the queue keys of this context, then closes it. */
  destroy(): Promise<void>;
}

export async function createTestContext(overrides: Record<string, string> = {}): Promise<TestContext> {
  const config = testConfig(overrides);
  // REDIS_URL in the overrides: a Redis server of the test's own (a test that counts what Redis reads).
  const ctx = await createContext(
    config,
    { ...serverUrls(), ...(overrides.REDIS_URL ? { redisUrl: overrides.REDIS_URL } : {}) },
    createLogger(config, 'test'),
  );
  return {
    ...ctx,
    destroy: async () => {
      await ctx.mongo.db.dropDatabase().catch(() => undefined);
      // Our keys and, on a Redis Cluster, the queues' hash-tagged ones ({prefix}:...), on every node.
      const keys = (
        await Promise.all([`${config.queuePrefix}:*`, `{${config.queuePrefix}}:*`].map((p) => keysEverywhere(ctx.redis, p)))
      ).flat();
      await deleteKeys(ctx.redis, keys);
      await ctx.close();
    },
  };
}

/** POSTs a GraphQL document and returns the parsed body with the HTTP status. */
export async function graphql<T = Record<string, unknown>>(
  baseUrl: string,
  query: string,
  variables?: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: { data?: T; errors?: Array<{ message: string; extensions?: { code?: string } }> } }> {
  const response = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, body: (await response.json()) as never };
}
