import { Readable } from 'node:stream';
import { RateStore } from '../../../src/api/store/rates';
import { ChangeAnnouncer } from '../../../src/api/store/change-announcer';
import { applyDeck } from '../../../src/shared/domain/rate-decks';
import type { Collections } from '../../../src/shared/domain/store';
import { createTestContext, TestContext } from '../../support/harness';
import { carrier, pricelist, seed } from '../../support/seed';

/**
 * An operator's edit of a rate (updatePricelistRate) read the rate before a rate deck gave it a new
 * version effective at T. Written blind, the edit meant for the version the operator saw lands on the
 * deck's (an end date cutting it short, a price overwriting the deck's): the edit is refused instead,
 * naming why, and nothing changes.
 */
describe('a rate edit racing a rate deck', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, { pricelists: [pricelist('retail')], carriers: [carrier('acme')] });
    await ctx.mongo.collections.rates.insertOne({
      _id: 'r44',
      pricelist_tag: 'retail',
      carrier_tag: 'acme',
      prefix: '44',
      datetime_start: null,
      datetime_end: null,
      connect_fee: 0,
      rate: 10,
      rate_increment: 1,
      interval_start: 0,
      description: 'UK',
    });
  });

  afterAll(async () => {
    await ctx?.destroy();
  });

  it('is refused when a deck added a version between its read and its write', async () => {
    const real = ctx.mongo.collections;
    let raced = false;
    // The rates collection as the API sees it: the deck runs just before the edit's write.
    const rates = new Proxy(real.rates, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (prop !== 'findOneAndUpdate' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: unknown[]) => {
          if (!raced) {
            raced = true;
            await applyDeck(real, Readable.from(['prefix,rate,connect_fee,rate_increment,description\n44,20,0,1,UK\n']), {
              pricelist_tag: 'retail',
              carrier_tag: 'acme',
              effective: new Date('2030-01-01T00:00:00Z'),
              announce: async () => undefined,
            });
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const store = new RateStore({ ...real, rates } as Collections, new ChangeAnnouncer(ctx, 'rating-data'), { maxTimeMS: 5000 });
    await expect(store.update({ id: 'r44' }, { datetime_end: new Date('2029-06-01T00:00:00Z') })).rejects.toThrow(
      /changed since it was read/,
    );
    const after = (await real.rates.findOne({ _id: 'r44' }))!;
    // The deck's version stands, untouched: price 20 from T, no end.
    expect(after).toMatchObject({ rate: 20, datetime_start: new Date('2030-01-01T00:00:00Z'), datetime_end: null });
    expect(after.previous_versions).toHaveLength(1);
  });
});
