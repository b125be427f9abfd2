import { AgentHarness, startAgentHarness } from '../../support/agent-harness';
import { account, carrier, pricelist, rate, seed } from '../../support/seed';

/** recordTransactions through the agent (GraphQL and the REST mirror), with a real worker process. */
describe('recordTransactions', () => {
  let h: AgentHarness;

  beforeAll(async () => {
    h = await startAgentHarness(1, { RECORD_BATCH_MAX: '5' });
    await seed(h.ctx, {
      carriers: [carrier('c1', { host: '10.0.0.1' })],
      pricelists: [pricelist('pl')],
      rates: [rate('pl', 'c1', '39', { rate: 20, rate_increment: 60 })],
      accounts: [account('alice', { balance: 100n }), account('bob', { balance: 100n })],
    });
  });

  afterAll(() => h?.close());

  const call = (tag: string, extra: Record<string, unknown> = {}) => ({
    transaction_tag: tag,
    account_tag: 'alice',
    source: '100',
    destination: '393299',
    timestamp_begin: '2026-11-21T10:00:00Z',
    timestamp_end: '2026-11-21T10:00:38Z',
    ...extra,
  });
  const mutation = `mutation($t: [RecordInput!]!) { recordTransactions(transactions: $t) { index transaction_tag ok reason } }`;

  it('answers each item: recorded, invalid, refused or duplicate', async () => {
    const { body } = await h.gql(mutation, {
      t: [
        call('r1'),
        call('r2', { timestamp_end: 'soon' }),
        call('r3', { account_tag: 'nobody' }),
        call('r1'),
        call('r4', { destination: '44' }),
      ],
    });
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      recordTransactions: [
        { index: 0, transaction_tag: 'r1', ok: true, reason: null },
        { index: 1, transaction_tag: 'r2', ok: false, reason: expect.stringMatching(/^BAD_USER_INPUT: timestamp_end: must be a datetime/) },
        { index: 2, transaction_tag: 'r3', ok: false, reason: 'NOT_FOUND' },
        { index: 3, transaction_tag: 'r1', ok: false, reason: 'DUPLICATE_TRANSACTION' },
        { index: 4, transaction_tag: 'r4', ok: false, reason: 'UNREACHABLE_DESTINATION' },
      ],
    });
    const alice = await h.ctx.mongo.collections.accounts.findOne({ account_tag: 'alice' });
    expect(alice!.balance).toBe(80n);
    expect(await h.ctx.mongo.collections.transactions.findOne({ transaction_tag: 'r1' })).toMatchObject({
      fee: 20n,
      state: 'imported',
      authorized: null,
    });
  });

  it('refuses more than RECORD_BATCH_MAX items as bad input', async () => {
    const { body } = await h.gql(mutation, { t: Array.from({ length: 6 }, (_, i) => call(`m${i}`)) });
    expect(body.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    expect(body.errors?.[0].message).toMatch(/transactions: must hold at most 5/);
  });

  it('is mirrored by POST /v1/record_transactions', async () => {
    const response = await fetch(`${h.url}/v1/record_transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ transactions: [call('x1', { account_tag: 'bob' }), { account_tag: 'bob' }] }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      results: [
        { index: 0, transaction_tag: 'x1', ok: true, reason: null },
        { index: 1, transaction_tag: null, ok: false, reason: 'BAD_USER_INPUT: timestamp_begin: is required' },
      ],
    });
    const bad = await fetch(`${h.url}/v1/record_transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"x":1}',
    });
    expect(bad.status).toBe(400);
  });
});
