import { Readable } from 'node:stream';
import { applyDeck, type DeckProgress } from '../../../src/shared/domain/rate-decks';
import { announceRatingDataChange } from '../../../src/shared/domain/rating-data/cache';
import { createTestContext, type TestContext } from '../../support/harness';

const LINES = 100_000;

/** A deck of LINES prefixes, produced 1,000 lines at a time (never the whole text at once). */
function deck(rateOf: (i: number) => number): Readable {
  return Readable.from(
    (function* () {
      yield 'prefix,rate,connect_fee,rate_increment,description\n';
      for (let i = 0; i < LINES; i += 1000) {
        let text = '';
        for (let j = i; j < i + 1000; j += 1) text += `${4_000_000 + j},${rateOf(j)},0,60,Destination ${j}\n`;
        yield text;
      }
    })(),
  );
}

describe('a 100,000-prefix deck', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await createTestContext();
    await ctx.mongo.collections.pricelists.insertOne({ _id: 'p1', pricelist_tag: 'wholesale', name: null, currency: 'USD' });
    await ctx.mongo.collections.carriers.insertOne({
      _id: 'c1',
      carrier_tag: 'bigcarrier',
      host: '10.0.0.1',
      port: 5060,
      protocol: 'UDP',
      active: true,
    });
  });

  afterAll(async () => {
    await ctx.destroy();
  });

  it(
    'is applied, then re-applied with everything unchanged, then replaced by a later deck',
    async () => {
      const options = {
        pricelist_tag: 'wholesale',
        carrier_tag: 'bigcarrier',
        effective: new Date('2026-07-01T00:00:00Z'),
        announce: () => announceRatingDataChange(ctx),
      };
      const progress: DeckProgress[] = [];
      let maxHeap = 0;
      // With node --expose-gc the sample is live memory, not garbage awaiting collection.
      const gc = (globalThis as { gc?: () => void }).gc;
      const sampleHeap = () => {
        gc?.();
        maxHeap = Math.max(maxHeap, process.memoryUsage().heapUsed);
      };
      let started = Date.now();
      const first = await applyDeck(
        ctx.mongo.collections,
        deck((i) => 1 + (i % 50)),
        { ...options, onProgress: (p) => (progress.push(p), sampleHeap()) },
      );
      const firstSeconds = (Date.now() - started) / 1000;
      expect(first).toMatchObject({ added: LINES, changed: 0, unchanged: 0, removed: 0, rejected_count: 0, lines: LINES });
      // Progress after every chunk of 1,000.
      expect(progress.filter((p) => p.phase === 'deck')).toHaveLength(LINES / 1000);
      expect(await ctx.mongo.collections.rates.countDocuments({ pricelist_tag: 'wholesale' })).toBe(LINES);

      started = Date.now();
      const second = await applyDeck(
        ctx.mongo.collections,
        deck((i) => 1 + (i % 50)),
        { ...options, onProgress: sampleHeap },
      );
      const secondSeconds = (Date.now() - started) / 1000;
      expect(second).toMatchObject({ added: 0, changed: 0, unchanged: LINES, removed: 0, rejected_count: 0 });

      // A new deck a month later with every price changed: each rate keeps its old version before it.
      started = Date.now();
      const later = new Date('2026-08-01T00:00:00Z');
      const third = await applyDeck(
        ctx.mongo.collections,
        deck((i) => 2 + (i % 50)),
        { ...options, effective: later, onProgress: sampleHeap },
      );
      const thirdSeconds = (Date.now() - started) / 1000;
      expect(third).toMatchObject({ added: 0, changed: LINES, unchanged: 0, removed: 0, rejected_count: 0 });
      const one = await ctx.mongo.collections.rates.findOne({ pricelist_tag: 'wholesale', carrier_tag: 'bigcarrier', prefix: '4000007' });
      expect(one).toMatchObject({
        rate: 9,
        datetime_start: later,
        previous_versions: [expect.objectContaining({ rate: 8, datetime_end: later })],
      });

      console.log(
        `100k deck: first run (all added) ${firstSeconds.toFixed(1)} s, second run (all unchanged) ${secondSeconds.toFixed(1)} s, ` +
          `third run (all changed) ${thirdSeconds.toFixed(1)} s; ` +
          (gc
            ? `largest live heap between chunks ${Math.round(maxHeap / 1048576)} MB`
            : 'run jest under node --expose-gc to see the live heap'),
      );
    },
    15 * 60 * 1000,
  );
});
