import { leasedRedisStore } from '../../../src/shared/infra/http/leased-rate-store';
import { createTestContext, TestContext, uniqueName } from '../../support/harness';

/**
 * The rate limit's store (src/shared/infra/http/leased-rate-store.ts): processes share one budget per
 * caller in Redis, claimed a hundredth at a time. Two stores stand for two agent processes.
 */
describe('a rate-limit budget claimed in blocks', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await createTestContext();
  });

  afterAll(() => ctx?.destroy());

  const incr = (store: { incr: (...args: never[]) => void }, key: string, max: number) =>
    new Promise<{ current: number; ttl: number }>((resolve, reject) =>
      (store.incr as (k: string, cb: (err: Error | null, r?: { current: number; ttl: number }) => void, w: number, m: number) => void)(
        key,
        (err, result) => (err ? reject(err) : resolve(result!)),
        60_000,
        max,
      ),
    );

  it('admits exactly the budget across processes, in one claim per hundredth of it', async () => {
    const Store = leasedRedisStore(ctx.redis, `${ctx.config.queuePrefix}:rate-limit:test:`);
    const [a, b] = [new Store(), new Store()];
    const key = uniqueName('caller');
    const max = 1000;
    // 1,500 requests, alternating and concurrent: 1,000 admitted (numbered 1..1000 between them), 500 refused.
    const results = await Promise.all(Array.from({ length: 1500 }, (_, i) => incr(i % 2 ? a : b, key, max)));
    const admitted = results.filter((r) => r.current <= max);
    expect(admitted).toHaveLength(max);
    expect(new Set(admitted.map((r) => r.current)).size).toBe(max);
    expect(results.every((r) => r.ttl > 0 && r.ttl <= 60_000)).toBe(true);
    // Claimed in blocks of 10: the shared count is 1,500 rounded up to whole blocks, far fewer claims than requests.
    const shared = Number(await ctx.redis.get(`${ctx.config.queuePrefix}:rate-limit:test:${key}`));
    expect(shared).toBeGreaterThanOrEqual(1500);
    expect(shared % 10).toBe(0);
    expect(shared).toBeLessThanOrEqual(1500 + 2 * 10);
  });

  it('claims one request at a time under a budget of 100, as a per-request counter', async () => {
    const Store = leasedRedisStore(ctx.redis, `${ctx.config.queuePrefix}:rate-limit:small:`);
    const [a, b] = [new Store(), new Store()];
    const key = uniqueName('caller');
    const currents = [];
    for (let i = 0; i < 5; i++) currents.push((await incr(i % 2 ? a : b, key, 3)).current);
    expect(currents).toEqual([1, 2, 3, 4, 5]);
  });
});
