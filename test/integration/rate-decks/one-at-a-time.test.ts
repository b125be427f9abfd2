import { Readable } from 'node:stream';
import { applyDeck, type ApplyDeckOptions } from '../../../src/shared/domain/rate-decks';
import { createTestContext, TestContext } from '../../support/harness';
import { carrier, pricelist, seed } from '../../support/seed';

/**
 * Two different decks for one pricelist and carrier run side by side would each win some prefixes (each
 * rate is written by compare-and-swap on its own): one deck's prices on one prefix, the other's on the
 * next, both reporting success. One runs at a time; the other is refused with who holds the pair.
 */
describe('rate decks of one pricelist and carrier, one at a time', () => {
  let ctx: TestContext;
  const HEADER = 'prefix,rate,connect_fee,rate_increment,description\n';
  const options = (overrides: Partial<ApplyDeckOptions> = {}): ApplyDeckOptions => ({
    pricelist_tag: 'retail',
    carrier_tag: 'acme',
    effective: new Date('2030-01-01T00:00:00Z'),
    announce: async () => undefined,
    chunkSize: 1,
    ...overrides,
  });
  const apply = (csv: string, overrides: Partial<ApplyDeckOptions> = {}) =>
    applyDeck(ctx.mongo.collections, Readable.from([csv]), options(overrides));

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, { pricelists: [pricelist('retail')], carriers: [carrier('acme'), carrier('other')] });
  });

  afterAll(async () => {
    await ctx?.destroy();
  });

  it('refuses a second deck of the pair while one runs, not a dry run or another carrier; takes over a lease left to expire', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    async function* slowDeck() {
      yield `${HEADER}44,10,0,1,UK\n`;
      await gate;
      yield '49,12,0,1,DE\n';
    }
    const first = applyDeck(ctx.mongo.collections, Readable.from(slowDeck()), options());
    // The first run holds the pair once it has written its first line.
    for (let i = 0; i < 200 && (await ctx.mongo.collections.rates.countDocuments({ carrier_tag: 'acme' })) === 0; i++)
      await new Promise((r) => setTimeout(r, 25));
    await expect(apply(`${HEADER}44,99,0,1,UK\n`)).rejects.toThrow(/a deck for pricelist "retail" and carrier "acme" is being applied/);
    await expect(apply(`${HEADER}44,99,0,1,UK\n`, { dryRun: true })).resolves.toMatchObject({ dry_run: true });
    await expect(apply(`${HEADER}44,20,0,1,UK\n`, { carrier_tag: 'other' })).resolves.toMatchObject({ added: 1 });
    release();
    await expect(first).resolves.toMatchObject({ added: 2, removed: 0 });
    // Done: the pair is free again.
    await expect(apply(`${HEADER}44,11,0,1,UK\n49,12,0,1,DE\n`)).resolves.toMatchObject({ changed: 1, unchanged: 1 });

    // A run that died holding the lease: once the lease has expired, the next run takes the pair over.
    await ctx.mongo.collections.deckLeases.insertOne({
      _id: 'retail/acme',
      run: 'dead',
      started_at: new Date(0),
      until: new Date(Date.now() - 1000),
    });
    await expect(apply(`${HEADER}44,12,0,1,UK\n49,12,0,1,DE\n`)).resolves.toMatchObject({ changed: 1 });
    expect(await ctx.mongo.collections.deckLeases.countDocuments()).toBe(0);
  });
});
