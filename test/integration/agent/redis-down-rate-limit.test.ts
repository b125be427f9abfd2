import { buildAgent } from '../../../src/agent/app';
import type { AppContext } from '../../../src/shared/domain/context';
import { OwnRedis } from '../../support/own-redis';
import { account, perSecondRating, seed } from '../../support/seed';

/**
 * The agent's requests while Redis is unreachable, once the process's share of the rate limit is used
 * up (docs/AGENT.md, "When an answer comes": every answer within AGENT_TIMEOUT_MS + AGENT_ABANDON_MS).
 * The rate limit's counter lives in Redis; ioredis holds a command while it reconnects, so claiming
 * the next block of the budget held every request until Redis came back. With a budget of 100 a
 * minute, a process claims one request at a time: the first request after Redis stops needs a claim.
 */
describe('agent requests while Redis is unreachable and the rate limit needs its counter', () => {
  let own: OwnRedis | undefined;
  let ctx: AppContext;
  let url: string;
  const timeoutMs = 1000;
  const abandonMs = 1000;

  beforeAll(async () => {
    const env = { AGENT_TIMEOUT_MS: String(timeoutMs), AGENT_ABANDON_MS: String(abandonMs), RATE_LIMIT_MAX: '100' };
    own = await OwnRedis.start('rate_limit_redis_down', env, async (c) => {
      await seed(c, { ...perSecondRating(), accounts: [account('cust', { balance: 1000n })] });
      return buildAgent(c);
    });
    ({ ctx, url } = own);
  }, 60000);

  afterAll(async () => {
    await own?.close();
  });

  it('answers within its bound (not held until Redis returns), and the answer says nothing was done', async () => {
    const begin = (tag: string) =>
      fetch(`${url}/v1/begin_transaction`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ transaction_tag: tag, account_tag: 'cust', source: '1', destination: '391234' }),
        // Past the documented bound the request is abandoned here: the test fails rather than hangs.
        signal: AbortSignal.timeout(timeoutMs + abandonMs + 3000),
      });
    await own!.stopRedis();
    for (const tag of ['down-1', 'down-2']) {
      const response = await begin(tag);
      expect(response.status).toBe(200);
      const body = (await response.json()) as { ok: boolean; reason: string };
      expect(body.ok).toBe(false);
      expect(['UNAVAILABLE', 'TIMEOUT']).toContain(body.reason);
    }
    expect((await ctx.mongo.collections.accounts.findOne({ account_tag: 'cust' }))!.running_transactions).toEqual([]);
  }, 30000);
});
