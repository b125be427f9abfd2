import type { FastifyInstance } from 'fastify';
import { Readable } from 'node:stream';
import { Collection } from 'mongodb';
import { applyDeck } from '../../../src/shared/domain/rate-decks';
import { buildApi } from '../../../src/api/app';
import { timingKey } from '../../../src/shared/domain/rating/timing';
import type { PricelistRateDoc, RateTiming } from '../../../src/shared/domain/types';
import { createTestContext, type TestContext } from '../../support/harness';

const T1 = new Date('2026-07-01T00:00:00Z');
const T2 = new Date('2026-08-01T00:00:00Z');
const T3 = new Date('2026-09-01T00:00:00Z');

const peak: RateTiming = { days: [1, 2, 3, 4, 5], start: '08:00:00', end: '18:00:00', holidays: null };
const weekend: RateTiming = { days: [6, 7], start: null, end: null, holidays: null };

/** Rate decks with timings, uploaded over POST /v1/rate-decks and read back from MongoDB. */
describe('rate decks with timings', () => {
  let ctx: TestContext;
  let app: FastifyInstance;
  let url: string;

  const upload = async (csv: string, effective: Date) => {
    const response = await fetch(`${url}/v1/rate-decks?pricelist_tag=retail&carrier_tag=acme&effective=${effective.toISOString()}`, {
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: csv,
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, unknown>;
  };
  const stored = () => ctx.mongo.collections.rates.find({ prefix: '44' }).toArray();
  const byTiming = async (timing: RateTiming | null): Promise<PricelistRateDoc | undefined> =>
    (await stored()).find((d) => (d.timing_key ?? null) === timingKey(timing));

  beforeAll(async () => {
    ctx = await createTestContext();
    app = await buildApi(ctx);
    url = await app.listen({ host: '127.0.0.1', port: 0 });
    await ctx.mongo.collections.pricelists.insertOne({ _id: 'p1', pricelist_tag: 'retail', name: null, currency: 'USD' });
    await ctx.mongo.collections.carriers.insertOne({
      _id: 'c1',
      carrier_tag: 'acme',
      host: '10.0.0.1',
      port: 5060,
      protocol: 'UDP',
      active: true,
    });
  });

  afterAll(async () => {
    await app.close();
    await ctx.destroy();
  });

  it('stores a base and a peak line for one prefix as two documents', async () => {
    const report = await upload('prefix,rate,days,start_time,end_time,description\n44,10,,,,UK\n44,30,mon-fri,08:00,18:00,UK peak\n', T1);
    expect(report).toMatchObject({ added: 2, changed: 0, unchanged: 0, removed: 0, rejected_count: 0 });
    const docs = await stored();
    expect(docs).toHaveLength(2);
    const base = docs.find((d) => d.rate === 10)!;
    // The untimed rate is stored exactly as before timings: neither field.
    expect(base).not.toHaveProperty('timing');
    expect(base).not.toHaveProperty('timing_key');
    expect(base).toMatchObject({ prefix: '44', description: 'UK', datetime_start: T1, datetime_end: null, previous_versions: [] });
    const timed = docs.find((d) => d.rate === 30)!;
    expect(timed).toMatchObject({
      prefix: '44',
      description: 'UK peak',
      timing: peak,
      timing_key: timingKey(peak),
      datetime_start: T1,
      datetime_end: null,
      previous_versions: [],
    });
  });

  it('a deck changing only the peak price versions only the peak document', async () => {
    const baseBefore = await byTiming(null);
    // On the prototype: the API writes through a connection pool of its own.
    const writes = jest.spyOn(Collection.prototype, 'bulkWrite');
    try {
      const report = await upload(
        'prefix,rate,days,start_time,end_time,description\n44,10,,,,UK\n44,35,"1,2,3,4,5",08:00:00,18:00:00,UK peak\n',
        T2,
      );
      expect(report).toMatchObject({ added: 0, changed: 1, unchanged: 1, removed: 0, rejected_count: 0 });
      // One write of one replacement: the compare-and-swap matched the timed document the first time.
      expect(writes).toHaveBeenCalledTimes(1);
      expect(writes.mock.calls[0][0]).toHaveLength(1);
    } finally {
      writes.mockRestore();
    }
    expect(await stored()).toHaveLength(2);
    expect(await byTiming(null)).toEqual(baseBefore);
    const timed = (await byTiming(peak))!;
    expect(timed).toMatchObject({ rate: 35, timing: peak, timing_key: timingKey(peak), datetime_start: T2, datetime_end: null });
    expect(timed.previous_versions).toEqual([
      {
        datetime_start: T1,
        datetime_end: T2,
        connect_fee: 0,
        rate: 30,
        rate_increment: 1,
        interval_start: 0,
        description: 'UK peak',
        timing: peak,
      },
    ]);
  });

  it('adds a weekend rate and removes the peak rate missing from a later deck; the same deck again writes nothing', async () => {
    const deck = 'prefix,rate,days,holidays,description\n44,10,,,UK\n44,5,sat-sun,,\n';
    expect(await upload(deck, T3)).toMatchObject({ added: 1, changed: 0, unchanged: 1, removed: 1, rejected_count: 0 });
    expect(await stored()).toHaveLength(3);
    expect(await byTiming(weekend)).toMatchObject({ rate: 5, timing: weekend, timing_key: timingKey(weekend), datetime_start: T3 });
    expect(await byTiming(peak)).toMatchObject({ rate: 35, datetime_start: T2, datetime_end: T3 });
    const docs = await stored();
    expect(await upload(deck, T3)).toMatchObject({ added: 0, changed: 0, unchanged: 2, removed: 0 });
    expect(await stored()).toEqual(docs);
  });

  it('rejects a duplicate timing and a bad timing with the field at fault', async () => {
    const docs = await stored();
    const report = await upload(
      'prefix,rate,days,start_time,end_time,description\n44,10,,,,UK\n44,5,6-7,,,\n44,6,"sat,sun",,,\n44,7,1-5,08:00,,\n',
      T3,
    );
    expect(report).toMatchObject({
      unchanged: 2,
      removed: 0,
      rejected: [
        { line: 4, reason: 'BAD_USER_INPUT: prefix: 44 with the timing days 6-7 already appears on line 3' },
        { line: 5, reason: 'BAD_USER_INPUT: end_time: give start_time and end_time both, or leave both empty for the whole day' },
      ],
      rejected_count: 2,
    });
    expect(await stored()).toEqual(docs);
  });

  it('a concurrent edit of the base and the weekend rates is re-read by their own keys and kept as the version before T', async () => {
    const T4 = new Date('2026-10-01T00:00:00Z');
    const rates = ctx.mongo.collections.rates;
    const original = rates.bulkWrite.bind(rates);
    let interfered = false;
    // Let the deck read both documents, then change them underneath before its write (compare-and-swap misses).
    const spy = jest.spyOn(rates, 'bulkWrite').mockImplementation(async (ops, options) => {
      if (!interfered) {
        interfered = true;
        await rates.updateOne({ prefix: '44', timing_key: { $exists: false } }, { $set: { description: 'base edited' } });
        await rates.updateOne({ prefix: '44', timing_key: timingKey(weekend)! }, { $set: { description: 'weekend edited' } });
      }
      return original(ops, options);
    });
    try {
      const report = await applyDeck(ctx.mongo.collections, Readable.from(['prefix,rate,days\n44,11,\n44,6,6-7\n']), {
        pricelist_tag: 'retail',
        carrier_tag: 'acme',
        effective: T4,
        announce: async () => {},
      });
      expect(report).toMatchObject({ added: 0, changed: 2, unchanged: 0, removed: 0, rejected_count: 0 });
    } finally {
      spy.mockRestore();
    }
    expect(await stored()).toHaveLength(3);
    const base = (await byTiming(null))!;
    expect(base).toMatchObject({ rate: 11, description: null, datetime_start: T4 });
    expect(base).not.toHaveProperty('timing_key');
    expect(base.previous_versions?.at(-1)).toMatchObject({ rate: 10, description: 'base edited', datetime_end: T4 });
    const weekendRate = (await byTiming(weekend))!;
    expect(weekendRate).toMatchObject({ rate: 6, timing: weekend, description: null, datetime_start: T4 });
    expect(weekendRate.previous_versions?.at(-1)).toMatchObject({
      rate: 5,
      description: 'weekend edited',
      timing: weekend,
      datetime_end: T4,
    });
    // The peak rate (ended at T3) is left as it was.
    expect(await byTiming(peak)).toMatchObject({ rate: 35, datetime_end: T3 });
  });
});
