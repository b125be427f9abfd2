import { Readable } from 'node:stream';
import { applyDeck } from '../../../src/shared/domain/rate-decks';
import { announceRatingDataChange } from '../../../src/shared/domain/rating-data/cache';
import { AgentHarness, startAgentHarness } from '../../support/agent-harness';
import { account, carrier, pricelist, seed } from '../../support/seed';

/**
 * Calls recorded after a deck changed their prefix's price are rated by their start time: before the
 * effective time with the old terms, from it on with the new ones (the workers' rating index, real worker process).
 */
describe('rate decks and recorded calls', () => {
  let h: AgentHarness;
  const T1 = new Date('2026-10-01T00:00:00Z');
  const T2 = new Date('2026-11-01T00:00:00Z');

  const deck = (csv: string, effective: Date) =>
    applyDeck(h.ctx.mongo.collections, Readable.from([csv]), {
      pricelist_tag: 'pl',
      carrier_tag: 'acme',
      effective,
      announce: () => announceRatingDataChange(h.ctx),
    });

  const record = (tag: string, begin: string, end: string) =>
    h.rest('/v1/record_transaction', {
      transaction_tag: tag,
      account_tag: 'alice',
      source: '100',
      destination: '447911123456',
      timestamp_begin: begin,
      timestamp_end: end,
    });

  beforeAll(async () => {
    h = await startAgentHarness(1);
    await seed(h.ctx, {
      carriers: [carrier('acme', { host: '10.0.0.1', port: 5060 })],
      pricelists: [pricelist('pl')],
      accounts: [account('alice', { balance: 100_000n, pricelist_tags: ['pl'] })],
    });
    expect(await deck('prefix,rate,connect_fee,rate_increment\n44,10,1,60\n', T1)).toMatchObject({ added: 1 });
    expect(await deck('prefix,rate,connect_fee,rate_increment\n44,30,2,60\n', T2)).toMatchObject({ changed: 1 });
  });

  afterAll(() => h?.close());

  it('a call that started before the effective time keeps the old price, one after it gets the new one', async () => {
    expect((await record('old', '2026-10-31T23:59:00Z', '2026-11-01T00:00:30Z')).body).toMatchObject({ ok: true });
    expect((await record('new', '2026-11-01T00:00:00Z', '2026-11-01T00:00:30Z')).body).toMatchObject({ ok: true });
    const records = h.ctx.mongo.collections.transactions;
    // 90 s and 30 s, 60-second steps: 2 and 1 minutes.
    expect(await records.findOne({ transaction_tag: 'old' })).toMatchObject({
      fee: 1n + 20n,
      destination_rate: { rate: 10, connect_fee: 1, prefix: '44' },
    });
    expect(await records.findOne({ transaction_tag: 'new' })).toMatchObject({
      fee: 2n + 30n,
      destination_rate: { rate: 30, connect_fee: 2, prefix: '44' },
    });
    // Before the first deck's effective time the destination had no rate.
    expect((await record('before', '2026-09-30T10:00:00Z', '2026-09-30T10:01:00Z')).body).toMatchObject({ ok: false });
  });
});
