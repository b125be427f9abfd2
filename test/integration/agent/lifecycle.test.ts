import { AgentHarness, startAgentHarness, waitFor } from '../../support/agent-harness';
import { account, carrier, pricelist, rate, seed } from '../../support/seed';

/**
 * The spec's lifecycle table, through the agent's HTTP endpoints, with two real worker processes.
 */
describe('transaction lifecycle through the agent', () => {
  let h: AgentHarness;

  beforeAll(async () => {
    h = await startAgentHarness(2);
    await seed(h.ctx, {
      carriers: [carrier('c1', { host: '10.0.0.1', port: 5060 }), carrier('c2', { host: '10.0.0.2', port: 5080, protocol: 'TCP' })],
      pricelists: [pricelist('pl')],
      rates: [
        rate('pl', 'c1', '3932', { rate: 20, rate_increment: 60 }),
        rate('pl', 'c2', '3932', { rate: 30, rate_increment: 60 }),
        rate('pl', 'c1', '39', { rate: 50 }),
      ],
      accounts: [account('alice', { balance: 100n })],
    });
  });

  afterAll(() => h?.close());

  const balance = async (tag: string) => (await h.ctx.mongo.collections.accounts.findOne({ account_tag: tag }))!.balance;
  const running = async (tag: string) => (await h.ctx.mongo.collections.accounts.findOne({ account_tag: tag }))!.running_transactions;

  it('begin -> running entry; end -> ended awaiting processing; processing -> record and debit (spec sample)', async () => {
    await h.ctx.queues.processing.pause();
    const begin = await h.gql(`mutation { beginTransaction(transaction_tag: "t1", account_tag: "alice", source: "100", destination: "393299", timestamp_begin: "2026-11-21T10:00:00Z") { ok reason } }`);
    expect(begin.body).toEqual({ data: { beginTransaction: { ok: true, reason: null } } });
    let entries = await running('alice');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ transaction_tag: 't1', in_progress: true, inbound: false, carrier_ip: '10.0.0.1:5060', timestamp_end: null });
    expect(entries[0].rate).toMatchObject({ rate: 20, carrier_tag: 'c1', prefix: '3932' });

    const end = await h.rest('/v1/end_transaction', { transaction_tag: 't1', account_tag: 'alice', timestamp_end: '2026-11-21T10:00:38Z' });
    expect(end).toEqual({ status: 200, body: { ok: true, reason: null } });
    entries = await running('alice');
    expect(entries[0]).toMatchObject({ in_progress: false });
    expect(entries[0].timestamp_end).toEqual(new Date('2026-11-21T10:00:38Z'));
    expect(await balance('alice')).toBe(100n);

    await h.ctx.queues.processing.resume();
    await waitFor(async () => (await running('alice')).length === 0, 'processing');
    expect(await balance('alice')).toBe(80n);
    const record = await h.ctx.mongo.collections.transactions.findOne({ account_tag: 'alice', transaction_tag: 't1' });
    expect(record).toMatchObject({ duration: 38, fee: 20n, carrier_ip: '10.0.0.1:5060', authorized: true, failed: false, inbound: false, state: 'charged' });
    expect(record!.destination_rate).toMatchObject({ pricelist_tag: 'pl', carrier_tag: 'c1', prefix: '3932', connect_fee: 0, rate: 20, rate_increment: 60, interval_start: 0 });
  });
});
