import { Readable } from 'node:stream';
import type { PricelistRateDoc } from '../../../src/shared/domain/types';
import { applyDeck, DeckError, type ApplyDeckOptions, type DeckReport } from '../../../src/shared/domain/rate-decks';
import { computeFee } from '../../../src/shared/domain/rating';
import { announceRatingDataChange, RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { createTestContext, type TestContext } from '../../support/harness';

const T1 = new Date('2026-07-01T00:00:00Z');
const T2 = new Date('2026-08-01T00:00:00Z');
const before = (t: Date) => new Date(t.getTime() - 1000);

describe('rate decks against the real servers', () => {
  let ctx: TestContext;
  let rating: RatingDataCache;
  const version = async () => Number((await ctx.redis.get(`${ctx.config.queuePrefix}:rating-data:version`)) ?? 0);

  const apply = (csv: string, options: Partial<ApplyDeckOptions> = {}): Promise<DeckReport> =>
    applyDeck(ctx.mongo.collections, Readable.from([csv]), {
      pricelist_tag: 'retail',
      carrier_tag: 'acme',
      effective: T1,
      announce: () => announceRatingDataChange(ctx),
      ...options,
    });

  const rates = (carrier = 'acme') =>
    ctx.mongo.collections.rates.find({ pricelist_tag: 'retail', carrier_tag: carrier }).sort({ prefix: 1 }).toArray();
  const byPrefix = async (prefix: string, carrier = 'acme') =>
    ctx.mongo.collections.rates.findOne({ pricelist_tag: 'retail', carrier_tag: carrier, prefix });

  /** Terms a call to `destination` starting at `at` gets, through the rating index built from the stored documents. */
  async function rateAt(destination: string, at: Date) {
    const index = await rating.index();
    const best = index.bestRate({ pricelistTags: ['retail'], destination, at });
    return (
      best && { carrier: best.carrier.carrier_tag, prefix: best.rate.prefix, rate: best.rate.rate, connect_fee: best.rate.connect_fee }
    );
  }

  beforeAll(async () => {
    ctx = await createTestContext();
    // The version starts at a random value with the first change (announced-version.ts): one change
    // first, so that each case counts its own from a known version.
    await announceRatingDataChange(ctx);
    rating = await RatingDataCache.start(ctx, 0);
    await ctx.mongo.collections.pricelists.insertOne({ _id: 'p1', pricelist_tag: 'retail', name: null, currency: 'USD' });
    await ctx.mongo.collections.carriers.insertMany([
      { _id: 'c1', carrier_tag: 'acme', host: '10.0.0.1', port: 5060, protocol: 'UDP', active: true },
      { _id: 'c2', carrier_tag: 'other', host: '10.0.0.2', port: 5060, protocol: 'UDP', active: true },
    ]);
    // A rate another carrier holds: a deck of acme never touches it.
    await ctx.mongo.collections.rates.insertOne({
      _id: 'other-44',
      pricelist_tag: 'retail',
      carrier_tag: 'other',
      prefix: '44',
      datetime_start: null,
      datetime_end: null,
      connect_fee: 0,
      rate: 50,
      rate_increment: 1,
      interval_start: 0,
      description: null,
    });
  });

  afterAll(async () => {
    await rating.close();
    await ctx.destroy();
  });

  it('adds every prefix of a first deck, valid from the effective time on', async () => {
    const v0 = await version();
    const report = await apply(
      'prefix,rate,connect_fee,rate_increment,description\n44,10,1,60,UK\n4420,8,,,London\n49,12,0,1,\n33,5,0,1,France\n',
    );
    expect(report).toMatchObject({
      added: 4,
      changed: 0,
      unchanged: 0,
      removed: 0,
      rejected: [],
      rejected_count: 0,
      lines: 4,
      dry_run: false,
      effective: T1.toISOString(),
    });
    expect(await version()).toBe(v0 + 1);
    const stored = await byPrefix('4420');
    expect(stored).toMatchObject({
      prefix: '4420',
      rate: 8,
      connect_fee: 0,
      rate_increment: 1,
      interval_start: 0,
      description: 'London',
      datetime_start: T1,
      datetime_end: null,
      previous_versions: [],
    });
    expect(await rateAt('4420123', T1)).toEqual({ carrier: 'acme', prefix: '4420', rate: 8, connect_fee: 0 });
    // Before T1 acme has no rate: the other carrier's 44 rate is all there is.
    expect(await rateAt('4420123', before(T1))).toEqual({ carrier: 'other', prefix: '44', rate: 50, connect_fee: 0 });
  });

  it('reports everything unchanged the second time and writes nothing', async () => {
    const v0 = await version();
    const docs = await rates();
    const report = await apply(
      'prefix,rate,connect_fee,rate_increment,description\n44,10,1,60,UK\n4420,8,,,London\n49,12,0,1,\n33,5,0,1,France\n',
    );
    expect(report).toMatchObject({ added: 0, changed: 0, unchanged: 4, removed: 0, rejected_count: 0 });
    expect(await version()).toBe(v0);
    expect(await rates()).toEqual(docs);
  });

  it('changes, adds and removes at a later effective time; calls before it keep the old price', async () => {
    const v0 = await version();
    // 44 changes, 4420 and 49 stay, 33 is missing (removed), 39 is new.
    const deck = 'prefix,rate,connect_fee,rate_increment,description\n44,11,1,60,UK\n4420,8,,,London\n49,12,0,1,\n39,7,0,1,Italy\n';
    const report = await apply(deck, { effective: T2 });
    expect(report).toMatchObject({ added: 1, changed: 1, unchanged: 2, removed: 1, rejected_count: 0 });
    expect(await version()).toBe(v0 + 1);

    const uk = (await byPrefix('44'))!;
    expect(uk).toMatchObject({ rate: 11, datetime_start: T2, datetime_end: null });
    expect(uk.previous_versions).toEqual([
      { datetime_start: T1, datetime_end: T2, connect_fee: 1, rate: 10, rate_increment: 60, interval_start: 0, description: 'UK' },
    ]);
    expect(await byPrefix('33')).toMatchObject({ rate: 5, datetime_start: T1, datetime_end: T2 });

    // Through the rating index: the old terms before T2, the new ones from T2 on.
    expect(await rateAt('4479', before(T2))).toEqual({ carrier: 'acme', prefix: '44', rate: 10, connect_fee: 1 });
    expect(await rateAt('4479', T2)).toEqual({ carrier: 'acme', prefix: '44', rate: 11, connect_fee: 1 });
    const index = await rating.index();
    const feeOf = (at: Date) => computeFee(index.bestRate({ pricelistTags: ['retail'], destination: '4479', at })!.rate, 61);
    expect(feeOf(before(T2))).toBe(1n + 20n); // 120 s charged at 10/min
    expect(feeOf(T2)).toBe(1n + 22n);
    expect(await rateAt('33123', before(T2))).toMatchObject({ carrier: 'acme', rate: 5 });
    expect(await rateAt('33123', T2)).toBeNull();
    expect(await rateAt('39123', before(T2))).toBeNull();
    expect(await rateAt('39123', T2)).toMatchObject({ carrier: 'acme', rate: 7 });

    // Idempotent: the same deck and time again changes nothing.
    const docs = await rates();
    expect(await apply(deck, { effective: T2 })).toMatchObject({ added: 0, changed: 0, unchanged: 4, removed: 0 });
    expect(await rates()).toEqual(docs);
    expect(await version()).toBe(v0 + 1);
    // The other carrier's rate is untouched.
    expect(await byPrefix('44', 'other')).toMatchObject({ rate: 50, datetime_end: null });
  });

  it('a deck effective before a later one drops the later version and keeps the earlier history', async () => {
    const T0 = new Date('2026-07-15T00:00:00Z');
    const report = await apply(
      'prefix,rate,connect_fee,rate_increment,description\n44,9,1,60,UK\n4420,8,,,London\n49,12,0,1,\n39,7,0,1,Italy\n',
      { effective: T0 },
    );
    // 44 changes; 39 (added at T2) starts after T0: changed to start at T0; 4420 and 49 unchanged;
    // 33 (valid from T1 to T2, missing from the deck) now ends at T0.
    expect(report).toMatchObject({ added: 0, changed: 2, unchanged: 2, removed: 1 });
    expect(await byPrefix('33')).toMatchObject({ datetime_start: T1, datetime_end: T0 });
    const uk = (await byPrefix('44'))!;
    expect(uk).toMatchObject({ rate: 9, datetime_start: T0, datetime_end: null });
    expect(uk.previous_versions).toEqual([expect.objectContaining({ rate: 10, datetime_start: T1, datetime_end: T0 })]);
    expect(await rateAt('4479', before(T0))).toMatchObject({ rate: 10 });
    expect(await rateAt('4479', T2)).toMatchObject({ rate: 9 });
  });

  it('rejects bad lines with their line number and reason, and they change nothing', async () => {
    const docs = await rates();
    const v0 = await version();
    const report = await apply(
      'prefix,rate,connect_fee,rate_increment,description\n44,abc,1,60,UK\n4420,-8,,,London\n49,12.5,0,1,\n39,7,0,1,Italy\n39,8,0,1,again\nxx,1,0,1,\n"1,2\n',
      { effective: T2 },
    );
    expect(report.rejected.map((r) => r.line)).toEqual([2, 3, 4, 6, 7, 8]);
    expect(report.rejected[0].reason).toMatch(/^BAD_USER_INPUT: rate: must be an integer/);
    expect(report.rejected[3].reason).toMatch(/prefix: 39 already appears on line 5/);
    expect(report.rejected_count).toBe(6);
    // 44, 4420 and 49 are on rejected lines: named by the deck, so not removed; 39 unchanged.
    expect(report).toMatchObject({ added: 0, changed: 0, unchanged: 1, removed: 0 });
    // A line with the wrong number of cells still names its prefix.
    const short = await apply('prefix,rate,description\n44,9\n4420,8,London\n49,12,\n39,7,Italy\n', { effective: T2 });
    expect(short.rejected).toEqual([{ line: 2, reason: 'BAD_USER_INPUT: expected 3 cells but got 2' }]);
    expect(short).toMatchObject({ removed: 0 });
    expect(await rates()).toEqual(docs);
    expect(await version()).toBe(v0);
  });

  it('refuses an unknown pricelist or carrier, or a bad header, before writing', async () => {
    const docs = await rates();
    await expect(apply('prefix,rate\n44,1\n', { pricelist_tag: 'nope' })).rejects.toMatchObject({
      code: 'INVALID_REFERENCE',
      field: 'pricelist_tag',
    });
    await expect(apply('prefix,rate\n44,1\n', { carrier_tag: 'nope' })).rejects.toMatchObject({
      code: 'INVALID_REFERENCE',
      field: 'carrier_tag',
    });
    await expect(apply('prefix,cost\n44,1\n')).rejects.toThrow(DeckError);
    expect(await rates()).toEqual(docs);
  });

  it('a dry run plans and counts the same and writes nothing', async () => {
    const docs = await rates();
    const v0 = await version();
    const report = await apply('prefix,rate\n44,1\n555,2\n', { effective: T2, dryRun: true });
    // 44 changes, 555 is added; 4420, 49 and 39 are removed (33 already ended at T2).
    expect(report).toMatchObject({ added: 1, changed: 1, unchanged: 0, removed: 3, dry_run: true });
    expect(await rates()).toEqual(docs);
    expect(await version()).toBe(v0);
  });

  it('removes a prefix whose only version starts at or after T by deleting it', async () => {
    const onlyLater = await apply('prefix,rate\n777,3\n', { carrier_tag: 'other', effective: T2 });
    expect(onlyLater).toMatchObject({ added: 1, removed: 1 }); // other's 44 ends at T2
    const earlier = await apply('prefix,rate\n', { carrier_tag: 'other', effective: T1 });
    // 777 (starting at T2) is deleted; 44 (ended at T2) now ends at T1.
    expect(earlier).toMatchObject({ added: 0, removed: 2 });
    expect(await byPrefix('777', 'other')).toBeNull();
    expect(await byPrefix('44', 'other')).toMatchObject({ datetime_end: T1 });
  });

  it('a concurrent API edit is not overwritten: the missed write is re-read and re-planned', async () => {
    // Let the deck read the document, then change it underneath before the write (compare-and-swap miss).
    const rates = ctx.mongo.collections.rates;
    const original = rates.bulkWrite.bind(rates);
    let interfered = false;
    const spy = jest.spyOn(rates, 'bulkWrite').mockImplementation(async (ops, options) => {
      if (!interfered) {
        interfered = true;
        await rates.updateOne(
          { pricelist_tag: 'retail', carrier_tag: 'acme', prefix: '4420' },
          { $set: { description: 'edited by the API' } },
        );
      }
      return original(ops, options);
    });
    try {
      const report = await apply('prefix,rate,description\n4420,6,London\n', { effective: T2, chunkSize: 10 });
      expect(report.changed).toBe(1);
    } finally {
      spy.mockRestore();
    }
    const doc = (await rates.findOne({ pricelist_tag: 'retail', carrier_tag: 'acme', prefix: '4420' })) as PricelistRateDoc;
    expect(doc).toMatchObject({ rate: 6, description: 'London', datetime_start: T2 });
    // The API's edit is kept as the version before T2.
    expect(doc.previous_versions?.at(-1)).toMatchObject({ rate: 8, description: 'edited by the API', datetime_end: T2 });
  });
});
