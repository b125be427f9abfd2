import { buildAgent } from '../../../src/agent/app';
import type { AppContext } from '../../../src/shared/domain/context';
import { OwnRedis } from '../../support/own-redis';
import { account, perSecondRating, seed } from '../../support/seed';

/**
 * recordTransactions while Redis is unreachable: every answer comes within AGENT_TIMEOUT_MS plus
 * AGENT_ABANDON_MS (docs/AGENT.md, "When an answer comes"), adding the batch to the queue included. The
 * agent runs against a redis-server of its own, stopped here; ioredis holds a command while it
 * reconnects, so an unbounded add held the request for as long as Redis stayed away.
 */
describe('recordTransactions while Redis is unreachable', () => {
  let own: OwnRedis | undefined;
  let ctx: AppContext;
  let url: string;

  beforeAll(async () => {
    own = await OwnRedis.start('batch_redis_down', { AGENT_TIMEOUT_MS: '1000', AGENT_ABANDON_MS: '1000' }, async (c) => {
      await seed(c, { ...perSecondRating(), accounts: [account('cust', { balance: 1000n })] });
      return buildAgent(c);
    });
    ({ ctx, url } = own);
  }, 60000);

  // Stopping while Redis is away must finish too (a QUIT held behind the queued add waited for good).
  afterAll(async () => {
    await own?.close();
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
    await own!.stopRedis();
    const down = await recordBatch('down');
    expect(down.status).toBe(200);
    expect(down.body.results).toEqual([expect.objectContaining({ ok: false, reason: 'UNAVAILABLE' })]);
    expect(await ctx.mongo.collections.transactions.countDocuments({ transaction_tag: 'down' })).toBe(0);
  }, 30000);
});
