import { ApiHarness, expectError, startApi } from '../api-harness';

/** The react-admin search box (`q`) and the transaction filters the console adds. */
describe('API console search (q)', () => {
  let api: ApiHarness;

  /** Tags of the records a list query returns for `filter`, sorted, and the count query's answer. */
  async function search(list: string, tagField: string, filter: Record<string, unknown>): Promise<{ tags: string[]; count: number }> {
    const type = { Accounts: 'AccountFilter', Carriers: 'CarrierFilter', Pricelists: 'PricelistFilter', Transactions: 'TransactionFilter' }[
      list
    ];
    const data = await api.ok(
      `query($f: ${type}) { all${list}(filter: $f, perPage: 100) { ${tagField} } _all${list}Meta(filter: $f) { count } }`,
      { f: filter },
    );
    const tags = (data[`all${list}`] as Array<Record<string, string>>).map((r) => r[tagField]).sort();
    return { tags, count: data[`_all${list}Meta`].count };
  }

  beforeAll(async () => {
    api = await startApi();
    await api.ok(`mutation {
      p1: createPricelist(pricelist_tag: "retail-eu", name: "Retail Europe", currency: EUR) { id }
      p2: createPricelist(pricelist_tag: "wholesale", name: "Carrier (a+b) rates", currency: USD) { id }
      p3: createPricelist(pricelist_tag: "plain", currency: USD) { id }
      c1: createCarrier(carrier_tag: "telco-one", host: "sip.telco.example", port: 5060) { id }
      c2: createCarrier(carrier_tag: "backup", host: "10.1.2.3", port: 5060) { id }
      c3: createCarrier(carrier_tag: "other", host: "gw.other.example", port: 5061) { id }
      a1: createAccount(account_tag: "alice", name: "Alice Liddell", customer_tag: "wonder", notification_email: "alice@rabbit.example", tags: ["VIP", "gold"]) { id }
      a2: createAccount(account_tag: "bob", name: "Bob (test.*)", customer_tag: "acme") { id }
      a3: createAccount(account_tag: "carol", name: "Carol", notification_email: "ops@acme.example") { id }
    }`);
    const t = (tag: string, account: string, source: string, destination: string, end: string) =>
      `${tag}: createTransaction(transaction_tag: "${tag}", account_tag: "${account}", source: "${source}", destination: "${destination}",
        timestamp_begin: "2026-01-01T10:00:00Z", timestamp_end: "${end}") { id }`;
    await api.ok(`mutation {
      ${t('call1', 'alice', '4420001', '39061234', '2026-01-01T10:01:00Z')}
      ${t('call2', 'alice', '4420001', '390699', '2026-01-01T11:00:00Z')}
      ${t('CALLX', 'bob', '100', '4930555', '2026-01-02T10:00:00Z')}
      ${t('call4', 'carol', '390611', '1800', '2026-01-03T10:00:00Z')}
    }`);
  });

  afterAll(async () => {
    await api.close();
  });

  describe('accounts', () => {
    it.each([
      ['a tag substring', 'lic', ['alice']],
      ['a name, any case', 'LIDDELL', ['alice']],
      ['the customer tag', 'acme', ['bob', 'carol']],
      ['the e-mail', 'rabbit.example', ['alice']],
      ['one of the tags, any case', 'vip', ['alice']],
      ['regex characters literally', '(test.*)', ['bob']],
      ['a dot literally', '.*', ['bob']],
      ['surrounding blanks trimmed', '  carol ', ['carol']],
      ['no match', 'nobody', []],
    ])('q matches %s', async (_what, q, expected) => {
      expect(await search('Accounts', 'account_tag', { q })).toEqual({ tags: expected, count: expected.length });
    });

    it('combines q with the other filter members', async () => {
      expect(await search('Accounts', 'account_tag', { q: 'acme', account_tag: ['carol'] })).toEqual({ tags: ['carol'], count: 1 });
    });

    it('a blank q adds no condition', async () => {
      expect((await search('Accounts', 'account_tag', { q: '   ' })).count).toBe(3);
    });
  });

  describe('carriers', () => {
    it.each([
      ['the tag, any case', 'TELCO', ['telco-one']],
      ['the host', 'example', ['other', 'telco-one']],
      ['dots literally (not any character)', '10.1.2', ['backup']],
      ['regex characters literally', '1.2.3$', []],
      ['no match', 'zzz', []],
    ])('q matches %s', async (_what, q, expected) => {
      expect(await search('Carriers', 'carrier_tag', { q })).toEqual({ tags: expected, count: expected.length });
    });
  });

  describe('pricelists', () => {
    it.each([
      ['the tag', 'whole', ['wholesale']],
      ['the name, any case', 'europe', ['retail-eu']],
      ['regex characters literally', '(a+b)', ['wholesale']],
      ['no match on a missing name', 'zzz', []],
    ])('q matches %s', async (_what, q, expected) => {
      expect(await search('Pricelists', 'pricelist_tag', { q })).toEqual({ tags: expected, count: expected.length });
    });
  });

  describe('transactions', () => {
    it.each([
      ['the transaction tag, any case', 'callx', ['CALLX']],
      ['the account tag', 'carol', ['call4']],
      ['the source', '4420001', ['call1', 'call2']],
      ['source or destination', '3906', ['call1', 'call2', 'call4']],
      ['regex characters literally', '39.6', []],
      ['no match', 'nothing', []],
    ])('q matches %s', async (_what, q, expected) => {
      expect(await search('Transactions', 'transaction_tag', { q })).toEqual({ tags: expected, count: expected.length });
    });

    it('destination_prefix matches the start of the destination only, literally', async () => {
      expect(await search('Transactions', 'transaction_tag', { destination_prefix: '3906' })).toEqual({
        tags: ['call1', 'call2'],
        count: 2,
      });
      expect(await search('Transactions', 'transaction_tag', { destination_prefix: '0612' })).toEqual({ tags: [], count: 0 });
      expect(await search('Transactions', 'transaction_tag', { destination_prefix: '.' })).toEqual({ tags: [], count: 0 });
      expect(await search('Transactions', 'transaction_tag', { destination_prefix: '39|49' })).toEqual({ tags: [], count: 0 });
      expect(await search('Transactions', 'transaction_tag', { destination_prefix: '3906', q: 'call2' })).toEqual({
        tags: ['call2'],
        count: 1,
      });
    });

    it('filters on timestamp_end with _gte and _lte (inclusive)', async () => {
      const f = { timestamp_end_gte: '2026-01-01T11:00:00Z', timestamp_end_lte: '2026-01-02T10:00:00Z' };
      expect(await search('Transactions', 'transaction_tag', f)).toEqual({ tags: ['CALLX', 'call2'], count: 2 });
      expect(await search('Transactions', 'transaction_tag', { timestamp_end_gt: '2026-01-02T10:00:00Z' })).toEqual({
        tags: ['call4'],
        count: 1,
      });
      expect(await search('Transactions', 'transaction_tag', { timestamp_end_lt: '2026-01-01T11:00:00Z' })).toEqual({
        tags: ['call1'],
        count: 1,
      });
    });
  });

  describe('limits', () => {
    const tooLong = 'x'.repeat(101);

    it.each([
      ['Accounts', 'AccountFilter'],
      ['Carriers', 'CarrierFilter'],
      ['Pricelists', 'PricelistFilter'],
      ['Transactions', 'TransactionFilter'],
    ])('all%s refuses a q over 100 characters with BAD_USER_INPUT on q, list and count alike', async (list, type) => {
      expectError(await api.gql(`query($f: ${type}) { all${list}(filter: $f) { id } }`, { f: { q: tooLong } }), 'BAD_USER_INPUT', 'q');
      expectError(
        await api.gql(`query($f: ${type}) { _all${list}Meta(filter: $f) { count } }`, { f: { q: tooLong } }),
        'BAD_USER_INPUT',
        'q',
      );
      // 100 characters are accepted.
      expect(
        (await api.gql(`query($f: ${type}) { _all${list}Meta(filter: $f) { count } }`, { f: { q: 'x'.repeat(100) } })).body.errors,
      ).toBeUndefined();
    });

    it('refuses a destination_prefix over 100 characters with BAD_USER_INPUT on destination_prefix', async () => {
      const answer = await api.gql('query($f: TransactionFilter) { allTransactions(filter: $f) { id } }', {
        f: { destination_prefix: '3'.repeat(101) },
      });
      expectError(answer, 'BAD_USER_INPUT', 'destination_prefix');
    });
  });
});
