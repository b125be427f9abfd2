import { announceRatingDataChange, RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { waitFor } from '../../support/agent-harness';
import { createTestContext, TestContext } from '../../support/harness';
import { account, perSecondRating, seed } from '../../support/seed';
import { callJobs } from '../../support/call-jobs';
import { startRerating } from '../../../src/shared/domain/rerating';
import { processRerateBatch } from '../../../src/workers/rerating/batch';
import { record } from '../../../src/workers/transactions/record';

/**
 * Each process keeps rates in memory and rebuilds when the announced version in Redis moves. Redis is
 * only the fast path: a Redis that lost its data (restarted without persistence) must not make a holder
 * take the next change for the version it already has, and rate calls at old prices from then on.
 */
describe('the rating data cache', () => {
  let ctx: TestContext;
  let cache: RatingDataCache;
  const rateOf = async () => (await cache.index()).matchingPrefixRates(['pl'], '391234', new Date())?.rates[0]?.rate.rate;

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, { ...perSecondRating('39', 0), accounts: [account('repriced', { balance: 1000n })] });
    cache = await RatingDataCache.start(ctx, 60_000);
  });

  afterAll(async () => {
    await cache?.close();
    await ctx?.destroy();
  });

  it('rebuilds after a change announced once Redis has lost the version it counted', async () => {
    // One change so far (the seed's): the holder has read the version that change made.
    expect(await rateOf()).toBe(60);
    // Redis restarted empty: the version key is gone. The next change must still be seen, though a
    // count started again would announce the very version the holder has.
    await ctx.redis.del(`${ctx.config.queuePrefix}:rating-data:version`);
    await ctx.mongo.collections.rates.updateMany({}, { $set: { rate: 120 } });
    await announceRatingDataChange(ctx);
    expect(await waitFor(async () => (await rateOf()) === 120, 'the change after the loss', 3_000)).toBe(true);
  });

  it('a version key lost twice, a change between the losses: the change is still seen', async () => {
    const key = `${ctx.config.queuePrefix}:rating-data:version`;
    await ctx.redis.del(key);
    await cache.freshIndex(); // the holder has read the version of a missing key
    await ctx.mongo.collections.rates.updateMany({}, { $set: { rate: 150 } });
    await announceRatingDataChange(ctx);
    await ctx.redis.del(key); // lost again before the holder read the change's version
    expect(await waitFor(async () => (await rateOf()) === 150, 'the change between the losses', 3_000)).toBe(true);
    await ctx.mongo.collections.rates.updateMany({}, { $set: { rate: 60 } });
    await announceRatingDataChange(ctx);
    expect(await waitFor(async () => (await rateOf()) === 60, 'the price set back', 3_000)).toBe(true);
  });

  it('a rerating rates with the prices as they are when it runs, though the change was not announced to its process yet', async () => {
    const t0 = Date.now() - 60_000;
    const job = callJobs(t0).record('repriced-call', 'repriced', 30);
    expect(await record({ ctx, rating: cache }, job, { id: 'record-repriced', deadline: job.deadline })).toMatchObject({ ok: true });
    const charged = (await ctx.mongo.collections.transactions.findOne({ account_tag: 'repriced' }))!.fee;
    // The operator fixes the price and starts a rerating at once; the worker's announcement is still on
    // its way (or lost): the version moved in Redis, and the run's first batch is already being taken.
    await ctx.mongo.collections.rates.updateMany({}, { $set: { rate: 240 } });
    await ctx.redis.incr(`${ctx.config.queuePrefix}:rating-data:version`);
    const selection = {
      from: new Date(t0 - 1000),
      to: new Date(),
      account_tags: ['repriced'],
      pricelist_tag: null,
      carrier_tag: null,
      prefix: null,
    };
    const run = await startRerating(ctx.mongo.collections, ctx.queues.imports, selection, { batchSize: 10 });
    await processRerateBatch({ ctx, rating: cache }, { rerating_id: run._id, batch: 0 });
    expect(await ctx.mongo.collections.reratings.findOne({ _id: run._id })).toMatchObject({
      state: 'done',
      counts: { seen: 1, changed: 1 },
    });
    expect((await ctx.mongo.collections.transactions.findOne({ account_tag: 'repriced' }))!.fee).toBe(120n);
    expect(charged).not.toBe(120n);
  });
});
