import { AccountStore } from '../../../../src/api/store/accounts';
import { References } from '../../../../src/api/store/references';
import { auditLedger } from '../../../../src/shared/domain/ledger/audit';
import { ApiHarness, expectError, startApi } from '../api-harness';

const ADJUST = `mutation($tag: String!, $amount: BigInt!, $reason: String!, $key: String) {
  adjustBalance(account_tag: $tag, amount: $amount, reason: $reason, idempotency_key: $key) { account_tag balance }
}`;

/** adjustBalance: an operator's balance change through the ledger, idempotent under a client key. */
describe('API adjustBalance', () => {
  let api: ApiHarness;
  const c = () => api.ctx.mongo.collections;
  const adjust = (vars: { tag: string; amount: unknown; reason: string; key?: string | null }) => api.gql(ADJUST, vars);
  const balanceOf = async (tag: string) => (await c().accounts.findOne({ account_tag: tag }))?.balance;
  const entriesOf = (tag: string) => c().ledger.find({ account_tag: tag }).sort({ at: 1 }).toArray();

  beforeAll(async () => {
    api = await startApi();
    await api.ok(`mutation {
      a: createAccount(account_tag: "acc", balance: 1000) { id }
      b: createAccount(account_tag: "other", balance: 50, type: POSTPAID) { id }
      r: createAccount(account_tag: "race", balance: 0) { id }
    }`);
  });

  afterAll(async () => {
    await api.close();
  });

  afterEach(async () => {
    // Whatever a test did, the ledger still explains every balance.
    const report = await auditLedger(c());
    expect(report.differences).toEqual([]);
    expect(report.pending_markers).toBe(0);
  });

  it('without a key: one ledger adjust entry carrying the trimmed reason, every call applied', async () => {
    const first = await adjust({ tag: 'acc', amount: 250, reason: '  top-up by card  ' });
    expect(first.body).toEqual({ data: { adjustBalance: { account_tag: 'acc', balance: 1250 } } });
    await adjust({ tag: 'acc', amount: '-50', reason: 'correction' });
    expect(await balanceOf('acc')).toBe(1200n);
    const entries = await entriesOf('acc');
    expect(entries).toEqual([
      expect.objectContaining({
        kind: 'adjust',
        amount: 250n,
        ref: 'top-up by card',
        transaction_tag: null,
        _id: expect.stringMatching(/^adjust:/),
      }),
      expect.objectContaining({ kind: 'adjust', amount: -50n, ref: 'correction' }),
    ]);
    expect(entries[0]._id).not.toBe(entries[1]._id);
  });

  it('with a key: the entry id derives from the key; a replay changes nothing and answers the current account', async () => {
    const vars = { tag: 'other', amount: '75', reason: 'invoice 42 paid', key: 'inv-42.paid:1' };
    const first = await adjust(vars);
    expect(first.body).toEqual({ data: { adjustBalance: { account_tag: 'other', balance: 125 } } });
    const entries = await entriesOf('other');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ _id: 'adjust:key:inv-42.paid:1', amount: 75n, kind: 'adjust', ref: 'invoice 42 paid' });

    const replay = await adjust(vars);
    expect(replay.body).toEqual({ data: { adjustBalance: { account_tag: 'other', balance: 125 } } });
    // A replay after other changes answers the account as it is now, still without applying again.
    await adjust({ tag: 'other', amount: 5, reason: 'another' });
    expect((await adjust(vars)).body.data?.adjustBalance).toEqual({ account_tag: 'other', balance: 130 });
    expect(await entriesOf('other')).toHaveLength(2);
  });

  it('10 concurrent calls with one key apply once', async () => {
    const vars = { tag: 'race', amount: 7, reason: 'concurrent top-up', key: 'race-key-0001' };
    const answers = await Promise.all(Array.from({ length: 10 }, () => adjust(vars)));
    for (const answer of answers) {
      expect(answer.body.errors).toBeUndefined();
      expect(answer.body.data?.adjustBalance).toEqual({ account_tag: 'race', balance: 7 });
    }
    expect(await balanceOf('race')).toBe(7n);
    expect(await entriesOf('race')).toEqual([expect.objectContaining({ _id: 'adjust:key:race-key-0001', amount: 7n })]);
  });

  it('applies once when 10 calls with one key reach the store at the same moment (no request queue in between)', async () => {
    const store = new AccountStore(c(), new References(c()), api.ctx.config, { maxTimeMS: 10000 }, api.ctx.mongo.db, {
      announce: async () => undefined,
    });
    const before = await balanceOf('race');
    const adjustment = { account_tag: 'race', amount: 3n, reason: 'store race', key: 'store-race-key' };
    const [results, other] = await Promise.all([
      Promise.all(Array.from({ length: 10 }, () => store.adjustBalance(adjustment))),
      // Unrelated balance changes at the same time make the compare-and-swap miss and retry.
      Promise.all(
        Array.from({ length: 5 }, (_, i) => store.adjustBalance({ account_tag: 'race', amount: 1n, reason: `noise ${i}`, key: null })),
      ),
    ]);
    expect(other).toHaveLength(5);
    expect(await balanceOf('race')).toBe((before as bigint) + 3n + 5n);
    for (const account of results) expect(account.account_tag).toBe('race');
    expect(await c().ledger.countDocuments({ _id: 'adjust:key:store-race-key' })).toBe(1);
  });

  it('10 concurrent calls with one key but different accounts or amounts: one applies, the others are refused', async () => {
    const calls = Array.from({ length: 10 }, (_, i) =>
      adjust({ tag: i % 2 === 0 ? 'race' : 'acc', amount: 100 + i, reason: 'contested', key: 'contested-key' }),
    );
    const answers = await Promise.all(calls);
    const applied = answers.filter((a) => !a.body.errors);
    // The winner's own retries (same account and amount) are the only other successes possible; here all differ.
    expect(applied).toHaveLength(1);
    for (const refused of answers.filter((a) => a.body.errors)) {
      const error = expectError(refused, 'BAD_USER_INPUT', 'idempotency_key');
      expect(error.message).toMatch(/idempotency_key already used for a different adjustment/);
    }
    const withKey = await c().ledger.find({ _id: 'adjust:key:contested-key' }).toArray();
    expect(withKey).toHaveLength(1);
  });

  it('refuses a key used for another account or amount, changing nothing', async () => {
    await adjust({ tag: 'acc', amount: 10, reason: 'first use', key: 'reused-key-1' });
    const before = { acc: await balanceOf('acc'), other: await balanceOf('other'), ledger: await c().ledger.countDocuments() };
    for (const vars of [
      { tag: 'other', amount: 10, reason: 'first use', key: 'reused-key-1' },
      { tag: 'acc', amount: 11, reason: 'first use', key: 'reused-key-1' },
      { tag: 'acc', amount: -10, reason: 'first use', key: 'reused-key-1' },
    ]) {
      const error = expectError(await adjust(vars), 'BAD_USER_INPUT', 'idempotency_key');
      expect(error.message).toBe('idempotency_key: idempotency_key already used for a different adjustment');
    }
    expect({ acc: await balanceOf('acc'), other: await balanceOf('other'), ledger: await c().ledger.countDocuments() }).toEqual(before);
  });

  it("refuses a key the deleted previous holder of the tag used: the new customer's top-up is never taken for a replay", async () => {
    await api.ok('mutation { createAccount(account_tag: "number", balance: 0) { id } }');
    const vars = { tag: 'number', amount: 500, reason: 'monthly top-up', key: 'topup-number-2026-11' };
    expect((await adjust(vars)).body).toEqual({ data: { adjustBalance: { account_tag: 'number', balance: 500 } } });
    await api.ok('mutation { deleteAccount(account_tag: "number") { id } }');
    await api.ok('mutation { createAccount(account_tag: "number", balance: 0) { id } }');
    const error = expectError(await adjust(vars), 'BAD_USER_INPUT', 'idempotency_key');
    expect(error.message).toBe('idempotency_key: idempotency_key already used for a different adjustment');
    expect(await balanceOf('number')).toBe(0n);
  });

  it.each([
    ['a zero amount', { amount: 0 }, 'amount'],
    ['a blank reason', { reason: '   ' }, 'reason'],
    ['a reason over 200 characters', { reason: 'r'.repeat(201) }, 'reason'],
    ['a key under 8 characters', { key: 'short' }, 'idempotency_key'],
    ['a key over 100 characters', { key: 'k'.repeat(101) }, 'idempotency_key'],
    ['a key with a space', { key: 'has space 1' }, 'idempotency_key'],
    ['a key with a slash', { key: 'has/slash1' }, 'idempotency_key'],
    ['an amount outside the 64-bit range', { tag: 'acc', amount: '9223372036854775807' }, 'amount'],
  ])('refuses %s with BAD_USER_INPUT, changing nothing', async (_what, override, field) => {
    const before = { acc: await balanceOf('acc'), ledger: await c().ledger.countDocuments() };
    expectError(await adjust({ tag: 'acc', amount: 5, reason: 'valid reason', key: 'valid-key-x', ...override }), 'BAD_USER_INPUT', field);
    expect({ acc: await balanceOf('acc'), ledger: await c().ledger.countDocuments() }).toEqual(before);
    // A refused request does not use up its key.
    if (field !== 'idempotency_key') expect(await c().ledger.findOne({ _id: 'adjust:key:valid-key-x' })).toBeNull();
  });

  it('accepts a 200-character reason and an 8- or 100-character key', async () => {
    expect((await adjust({ tag: 'acc', amount: 1, reason: 'r'.repeat(200), key: 'k'.repeat(8) })).body.errors).toBeUndefined();
    expect((await adjust({ tag: 'acc', amount: 1, reason: 'ok', key: 'K'.repeat(100) })).body.errors).toBeUndefined();
  });

  it('answers NOT_FOUND for an unknown account, changing nothing', async () => {
    const ledger = await c().ledger.countDocuments();
    expectError(await adjust({ tag: 'ghost', amount: 5, reason: 'x', key: 'ghost-key-1' }), 'NOT_FOUND');
    expect(await c().ledger.countDocuments()).toBe(ledger);
    // The key was not used up by the refusal: it still works for an existing account.
    expect((await adjust({ tag: 'acc', amount: 1, reason: 'x', key: 'ghost-key-1' })).body.errors).toBeUndefined();
  });

  it('requires every argument but the key (schema validation)', async () => {
    const answer = await api.gql('mutation { adjustBalance(account_tag: "acc", amount: 5) { balance } }');
    expect(answer.status).toBe(400);
  });
});
