import { Readable } from 'node:stream';
import { applyDeck } from '../../../src/shared/domain/rate-decks';
import { createTestContext, TestContext } from '../../support/harness';
import { carrier, pricelist, seed } from '../../support/seed';

/**
 * A deck line the CSV reader cannot read (a quote left open: `44,10,0,1,"United Kingdom`) can swallow
 * the lines after it into one unreadable record, so which prefixes the deck names is no longer known.
 * Removing every rate it does not seem to name would end thousands of them at T: no rate is removed
 * by such a deck, and the report says why. The lines it could read are applied as usual.
 */
describe('a rate deck with an unreadable line', () => {
  let ctx: TestContext;
  const T = new Date('2030-01-01T00:00:00Z');
  const apply = (csv: string, dryRun = false) =>
    applyDeck(ctx.mongo.collections, Readable.from([csv]), {
      pricelist_tag: 'retail',
      carrier_tag: 'acme',
      effective: T,
      dryRun,
      announce: async () => undefined,
    });

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, { pricelists: [pricelist('retail')], carriers: [carrier('acme')] });
    const first = await apply('prefix,rate,connect_fee,rate_increment,description\n44,10,0,1,UK\n49,12,0,1,DE\n33,5,0,1,FR\n39,7,0,1,IT\n');
    expect(first).toMatchObject({ added: 4, removed: 0, rejected_count: 0 });
  });

  afterAll(async () => {
    await ctx?.destroy();
  });

  it('removes nothing, says so, and still applies the lines it could read', async () => {
    const before = await ctx.mongo.collections.rates.countDocuments({ datetime_end: null });
    // The quote opened on line 2 is never closed: lines 2 to 4 are one record the reader gives up on.
    const csv = 'prefix,rate,connect_fee,rate_increment,description\n39,8,0,1,IT\n44,11,0,1,"United Kingdom\n49,12,0,1,DE\n33,5,0,1,FR\n';
    for (const dryRun of [true, false]) {
      const report = await apply(csv, dryRun);
      expect(report).toMatchObject({ changed: 1, removed: 0 });
      expect(report.rejected_count).toBeGreaterThan(0);
      expect(report.removals_skipped).toMatch(/a quote left open at or before line \d+ may hide the lines after it: no rate was removed/);
    }
    expect(await ctx.mongo.collections.rates.countDocuments({ datetime_end: null })).toBe(before);
  });

  it('a quote closed on a later line swallows the lines between: nothing removed either', async () => {
    const csv = 'prefix,rate,connect_fee,rate_increment,description\n39,8,0,1,"Italy\n44,11,0,1,UK\n49,12,0,1,DE"\n';
    const report = await apply(csv, true);
    expect(report).toMatchObject({ removed: 0, dry_run: true });
    expect(report.removals_skipped).toMatch(/quote left open/);
  });

  it('a quote inside a cell stays on its line: the other rates the deck omits are still removed', async () => {
    const csv = 'prefix,rate,connect_fee,rate_increment,description\n39,8,0,1,Mobile "Premium"\n44,11,0,1,UK\n49,12,0,1,DE\n';
    const report = await apply(csv, true);
    // 39's line is rejected whole, its prefix unread (docs/RATE-DECKS.md: a rejected line protects its
    // rate only when its prefix can be read); 33, absent from the deck, is removed with it.
    expect(report).toMatchObject({ rejected_count: 1, removed: 2 });
    expect(report.removals_skipped).toBeUndefined();
  });
});
