import type { FastifyInstance } from 'fastify';
import { buildAgent } from '../../../src/agent/app';
import { AppContext, createContext } from '../../../src/shared/domain/context';
import { createLogger } from '../../../src/shared/infra/logger';
import { startRedisServer } from '../../../src/shared/infra/services/redis-server';
import type { RunningServer } from '../../../src/shared/infra/services/redis-server';
import { serverUrls, testConfig, uniqueName } from '../../support/harness';
import { account, perSecondRating, seed } from '../../support/seed';

/**
 * recordTransactions while Redis is unreachable: every answer comes within AGENT_TIMEOUT_MS plus
 * AGENT_ABANDON_MS (docs/AGENT.md, "When an answer comes"), adding the batch to the queue included. The
 * agent runs against a redis-server of its own, stopped here; ioredis holds a command while it
 * reconnects, so an unbounded add held the request for as long as Redis stayed away.
 */
describe('recordTransactions while Redis is unreachable', () => {
  let redis: RunningServer | undefined;
  let ctx: AppContext | undefined;
  let app: FastifyInstance | undefined;
  let url: string;

  beforeAll(async () => {
    redis = await startRedisServer({ host: '127.0.0.1' });
    const config = testConfig({ MONGO_DB: uniqueName('batch_redis_down'), AGENT_TIMEOUT_MS: '1000', AGENT_ABANDON_MS: '1000' });
    ctx = await createContext(config, { mongoUrl: serverUrls().mongoUrl, redisUrl: redis.url }, createLogger(config, 'test'));
    await seed(ctx, { ...perSecondRating(), accounts: [account('cust', { balance: 1000n })] });
    app = await buildAgent(ctx);
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  }, 60000);

  // Stopping while Redis is away must finish too (a QUIT held behind the queued add waited for good).
  afterAll(async () => {
    await app?.close();
    await ctx?.mongo.db.dropDatabase().catch(() => undefined);
    await ctx?.close().catch(() => undefined);
    await redis?.stop();
  });

  const recordBatch = async (tag: string) => {
    const response = await fetch(`${url}/v1/record_transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        transactions: [
          {
            transaction_tag: tag,
            account_tag: 'cust',
            source: '1',
            destination: '391234',
            timestamp_begin: '2026-01-05T10:00:00Z',
            timestamp_end: '2026-01-05T10:01:00Z',
          },
        ],
      }),
    });
    return { status: response.status, body: (await response.json()) as { results: Array<{ ok: boolean; reason: string | null }> } };
  };

  it('answers UNAVAILABLE for its items instead of waiting for Redis, and records nothing', async () => {
    // The batch service (its queue events) starts on first use: started while Redis is up.
    const first = await recordBatch('before');
    expect(first.status).toBe(200);
    await redis!.stop();
    const down = await recordBatch('down');
    expect(down.status).toBe(200);
    expect(down.body.results).toEqual([expect.objectContaining({ ok: false, reason: 'UNAVAILABLE' })]);
    expect(await ctx!.mongo.collections.transactions.countDocuments({ transaction_tag: 'down' })).toBe(0);
  }, 30000);
});
