import { ApiHarness, expectError, startApi } from './api-harness';

/** The error contract of docs/DESIGN.md section 5, as the management API answers it. */
describe('API errors', () => {
  let api: ApiHarness;

  beforeAll(async () => {
    api = await startApi();
    await api.ok('mutation { createAccount(account_tag: "acc") { id } }');
  });

  afterAll(async () => {
    await api.close();
  });

  it('answers a syntax error with HTTP 400 and GRAPHQL_PARSE_FAILED', async () => {
    const answer = await api.gql('{ allCarriers { id ');
    expect(answer.status).toBe(400);
    expectError(answer, 'GRAPHQL_PARSE_FAILED');
  });

  it('answers a schema validation error with HTTP 400 and GRAPHQL_VALIDATION_FAILED', async () => {
    const answer = await api.gql('{ allCarriers { password } }');
    expect(answer.status).toBe(400);
    expect(answer.body.data ?? null).toBeNull();
    expect(expectError(answer, 'GRAPHQL_VALIDATION_FAILED').message).toContain('password');
  });

  it('answers unusable HTTP requests with HTTP 4xx and BAD_REQUEST', async () => {
    const post = async (body: string) => {
      const response = await fetch(`${api.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      return { status: response.status, body: (await response.json()) as { errors: Array<{ extensions: { code: string } }> } };
    };
    for (const body of ['not json', '{}', JSON.stringify({ query: 42 })]) {
      const answer = await post(body);
      expect({ body, status: answer.status, code: answer.body.errors[0].extensions.code }).toEqual({
        body,
        status: 400,
        code: 'BAD_REQUEST',
      });
    }
    const get = await fetch(`${api.url}/graphql?query=${encodeURIComponent('mutation { deleteCarrier(id: "x") { id } }')}`);
    expect(get.status).toBe(405);
  });

  it('names the input field of a refused variable value, nested ones included', async () => {
    const answer = await api.gql('query ($f: TransactionFilter) { allTransactions(filter: $f) { id } }', {
      f: { timestamp_begin_gte: 'yesterday' },
    });
    expect(answer.status).toBe(400);
    expect(expectError(answer, 'BAD_USER_INPUT', 'timestamp_begin_gte').message).toMatch(/^timestamp_begin_gte: must be a datetime/);
    const amount = await api.gql('mutation ($a: BigInt) { incrementAccountBalance(account_tag: "acc", amount: $a) { id } }', { a: 1.5 });
    expectError(amount, 'BAD_USER_INPUT', 'a');
  });

  it('accepts BigInt as a JSON number or a decimal string in variables', async () => {
    const run = (a: unknown) =>
      api.ok('mutation ($a: BigInt) { incrementAccountBalance(account_tag: "acc", amount: $a) { balance } }', { a });
    expect((await run(5)).incrementAccountBalance.balance).toBe(5);
    expect((await run('-2')).incrementAccountBalance.balance).toBe(3);
  });

  it('answers resolver errors with HTTP 200, path, and the data that succeeded', async () => {
    const answer = await api.gql(`mutation {
      ok: createCarrier(carrier_tag: "partial", host: "h", port: 1) { carrier_tag }
      bad: createCarrier(carrier_tag: "partial2", host: "h", port: 0) { carrier_tag }
    }`);
    expect(answer.status).toBe(200);
    expect(answer.body.data).toEqual({ ok: { carrier_tag: 'partial' }, bad: null });
    const error = expectError(answer, 'BAD_USER_INPUT', 'port');
    expect(error.path).toEqual(['bad']);
    expect(error.message).toBe('port: must be from 1 to 65535');
  });

  it('hides unexpected failures behind INTERNAL_ERROR', async () => {
    await api.ctx.mongo.collections.carriers.insertOne({
      _id: 'corrupt',
      carrier_tag: 'corrupt',
      host: 'h',
      port: 'not a port' as unknown as number,
      protocol: 'UDP',
      active: true,
    });
    const answer = await api.gql('{ Carrier(id: "corrupt") { id port } version }');
    expect(answer.status).toBe(200);
    expect(answer.body.data).toEqual({ Carrier: null, version: expect.any(String) });
    const error = expectError(answer, 'INTERNAL_ERROR');
    expect(error.message).toBe('Internal server error');
    expect(error.path).toEqual(['Carrier', 'port']);
  });

  it('ignores __typename members that Apollo clients echo back in variables', async () => {
    const data = await api.ok(
      'mutation ($rate: InputAccountPricelistRate) { createTransaction(account_tag: "acc", transaction_tag: "typename", destination_rate: $rate) { destination_rate { rate } } }',
      { rate: { __typename: 'RateSnapshot', pricelist_tag: 'p', carrier_tag: 'c', prefix: '1', rate: 4 } },
    );
    expect(data.createTransaction.destination_rate).toEqual({ rate: 4 });
  });
});
