import { AgentHarness, startAgentHarness, waitFor } from '../../support/agent-harness';
import { account, perSecondRating, seed } from '../../support/seed';

/**
 * What Canyan's clients (and SIP proxies configured for Canyan) send and read, through the agent's
 * HTTP endpoints with a real worker: `mutation { authorization }`, answers carrying the call's
 * identifiers, account tags given as the proxy's From URI, and epoch timestamps.
 */
describe("Canyan's agent interface", () => {
  let h: AgentHarness;
  const transactions = () => h.ctx.mongo.collections.transactions;
  const running = async (tag: string) => (await h.ctx.mongo.collections.accounts.findOne({ account_tag: tag }))!.running_transactions;
  const call = (tag: string, accountTag: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    transaction_tag: tag,
    account_tag: accountTag,
    source: '100',
    destination: '393299',
    ...extra,
  });

  beforeAll(async () => {
    h = await startAgentHarness(1);
    // 1 per second, no connect fee: a call's fee is its billed duration in seconds.
    await seed(h.ctx, {
      ...perSecondRating('39', 0),
      accounts: [
        account('alice', { balance: 1_000_000n }),
        account('bob', { balance: 0n }),
        account('off', { active: false }),
        account('1001', { balance: 1_000_000n }),
      ],
    });
  });

  afterAll(() => h?.close());

  describe('authorization', () => {
    it('answers the Canyan form: a mutation', async () => {
      const answer = await h.gql(`mutation { authorization(account_tag: "alice", destination: "393299") { authorized carriers } }`);
      expect(answer).toEqual({
        status: 200,
        body: { data: { authorization: { authorized: true, carriers: ['UDP:c1.example.net:5060'] } } },
      });
      // The query form stays.
      const query = await h.gql(`query { authorization(account_tag: "alice", destination: "393299") { authorized carriers } }`);
      expect(query.body).toEqual(answer.body);
    });

    const fields =
      'authorized unauthorized_reason max_available_units balance carriers transaction_tag account_tag destination_account_tag authorized_destination unauthorized_account_tag';

    it('an authorized call: the request identifiers, the number rating used, no refusing account (REST and GraphQL)', async () => {
      const expected = {
        authorized: true,
        unauthorized_reason: null,
        max_available_units: 14400,
        balance: '1000000',
        carriers: ['UDP:c1.example.net:5060'],
        transaction_tag: 'auth-1',
        account_tag: 'alice',
        destination_account_tag: 'bob',
        authorized_destination: true,
        unauthorized_account_tag: null,
      };
      const rest = await h.rest('/v1/authorization', {
        transaction_tag: 'auth-1',
        account_tag: 'alice',
        destination_account_tag: 'bob',
        source: '100',
        destination: 'sip:+39 3299@gw.example.net;user=phone',
      });
      expect(rest).toEqual({ status: 200, body: expected });
      const gql = await h.gql(
        `mutation { authorization(transaction_tag: "auth-2", account_tag: "alice", destination_account_tag: "bob", destination: "+39 3299") { ${fields} } }`,
      );
      expect(gql.body).toEqual({ data: { authorization: { ...expected, transaction_tag: 'auth-2' } } });
    });

    it('a refused call: which account refused, no destination, no transaction_tag when none was sent', async () => {
      const refusedFields = {
        authorized: false,
        max_available_units: 0,
        authorized_destination: null,
        transaction_tag: null,
        destination_account_tag: null,
      };
      expect((await h.rest('/v1/authorization', { account_tag: 'off', destination: '393299' })).body).toMatchObject({
        ...refusedFields,
        unauthorized_reason: 'NOT_ACTIVE',
        account_tag: 'off',
        unauthorized_account_tag: 'off',
      });
      expect((await h.rest('/v1/authorization', { account_tag: 'nobody', destination: '393299' })).body).toMatchObject({
        ...refusedFields,
        unauthorized_reason: 'NOT_FOUND',
        account_tag: 'nobody',
        unauthorized_account_tag: 'nobody',
      });
      const byReceiver = await h.gql(
        `{ authorization(account_tag: "alice", destination_account_tag: "off", destination: "393299") { ${fields} } }`,
      );
      expect(byReceiver.body.data).toMatchObject({
        authorization: {
          ...refusedFields,
          unauthorized_reason: 'NOT_ACTIVE',
          account_tag: 'alice',
          destination_account_tag: 'off',
          unauthorized_account_tag: 'off',
        },
      });
      const unreachable = await h.rest('/v1/authorization', { account_tag: 'alice', destination: '44123' });
      expect(unreachable.body).toMatchObject({
        ...refusedFields,
        authorized_destination: false,
        unauthorized_reason: 'UNREACHABLE_DESTINATION',
        unauthorized_account_tag: 'alice',
      });
      // Refused for money, after the destination was found: it may be called (by someone who can pay).
      const broke = await h.rest('/v1/authorization', { account_tag: 'bob', destination: '393299' });
      expect(broke.body).toMatchObject({
        authorized: false,
        unauthorized_reason: 'BALANCE_INSUFFICIENT',
        authorized_destination: true,
        unauthorized_account_tag: 'bob',
      });
    });
  });

  it('begin, end, record and rollback answer the call they are about (REST and GraphQL)', async () => {
    const answer = (tag: string, accountTag: string, reason: string | null = null) => ({
      ok: reason === null,
      reason,
      transaction_tag: tag,
      account_tag: accountTag,
    });
    expect((await h.rest('/v1/begin_transaction', call('life-1', 'alice'))).body).toEqual(answer('life-1', 'alice'));
    expect((await h.rest('/v1/begin_transaction', call('life-x', 'nobody'))).body).toEqual(answer('life-x', 'nobody', 'NOT_FOUND'));
    // The second end finds the call ended, or already charged (its record): ALREADY_ENDED either way.
    expect((await h.rest('/v1/end_transaction', { transaction_tag: 'life-1', account_tag: 'alice' })).body).toEqual(
      answer('life-1', 'alice'),
    );
    expect((await h.rest('/v1/end_transaction', { transaction_tag: 'life-1', account_tag: 'alice' })).body).toEqual(
      answer('life-1', 'alice', 'ALREADY_ENDED'),
    );
    await waitFor(async () => (await running('alice')).length === 0, 'processing of life-1');
    expect((await h.rest('/v1/rollback_transaction', { transaction_tag: 'life-1', account_tag: 'alice' })).body).toEqual(
      answer('life-1', 'alice'),
    );

    const select = '{ ok reason transaction_tag account_tag }';
    const begin = await h.gql(
      `mutation { beginTransaction(transaction_tag: "life-2", account_tag: "alice", source: "100", destination: "393299") ${select} }`,
    );
    expect(begin.body).toEqual({ data: { beginTransaction: answer('life-2', 'alice') } });
    const end = await h.gql(`mutation { endTransaction(transaction_tag: "life-2", account_tag: "alice") ${select} }`);
    expect(end.body).toEqual({ data: { endTransaction: answer('life-2', 'alice') } });
    const record = await h.gql(
      `mutation { recordTransaction(transaction_tag: "life-3", account_tag: "alice", source: "100", destination: "393299", timestamp_begin: "2026-11-21T10:00:00Z", timestamp_end: "2026-11-21T10:00:10Z") ${select} }`,
    );
    expect(record.body).toEqual({ data: { recordTransaction: answer('life-3', 'alice') } });
    const rollback = await h.gql(`mutation { rollbackTransaction(transaction_tag: "life-3", account_tag: "alice") ${select} }`);
    expect(rollback.body).toEqual({ data: { rollbackTransaction: answer('life-3', 'alice') } });
    const unknown = await h.gql(`mutation { rollbackTransaction(transaction_tag: "life-3", account_tag: "alice") ${select} }`);
    expect(unknown.body).toEqual({ data: { rollbackTransaction: answer('life-3', 'alice', 'NOT_FOUND') } });
  });

  it("takes an account given as a SIP URI (a proxy's From and To URIs) as the URI's user part", async () => {
    const begin = await h.rest(
      '/v1/begin_transaction',
      call('uri-1', 'sip:1001@pbx.example.net', { destination_account_tag: '"Bob" <sip:bob@pbx.example.net>;tag=a73kszlfl' }),
    );
    expect(begin).toEqual({ status: 200, body: { ok: true, reason: null, transaction_tag: 'uri-1', account_tag: '1001' } });
    expect((await running('1001')).map((e) => e.transaction_tag)).toEqual(['uri-1']);
    expect((await running('bob')).map((e) => [e.transaction_tag, e.inbound])).toEqual([['uri-1', true]]);
    const end = await h.gql(`mutation { endTransaction(transaction_tag: "uri-1", account_tag: "<sip:1001@pbx>") { ok account_tag } }`);
    expect(end.body).toEqual({ data: { endTransaction: { ok: true, account_tag: '1001' } } });
    await waitFor(() => transactions().findOne({ account_tag: '1001', transaction_tag: 'uri-1', state: 'charged' }), 'processing of uri-1');

    const auth = await h.rest('/v1/authorization', {
      account_tag: 'sip:1001@pbx',
      destination_account_tag: 'sips:bob@pbx',
      destination: '393299',
    });
    expect(auth.body).toMatchObject({ authorized: true, account_tag: '1001', destination_account_tag: 'bob' });
    expect((await h.rest('/v1/rollback_transaction', { transaction_tag: 'uri-1', account_tag: 'tel:1001' })).body).toEqual({
      ok: true,
      reason: null,
      transaction_tag: 'uri-1',
      account_tag: '1001',
    });
    // A user part that is no tag is refused as the field it came in.
    const bad = await h.rest('/v1/end_transaction', { transaction_tag: 'uri-1', account_tag: `sip:${'x'.repeat(129)}@pbx` });
    expect(bad).toMatchObject({ status: 400, body: { error: { code: 'BAD_USER_INPUT', field: 'account_tag' } } });
  });

  describe('epoch timestamps', () => {
    it('a record with epoch begin and end is billed for its exact duration', async () => {
      // Kamailio's $TV(Sn): seconds and microseconds. 5.000000 s, then 7.000001 s (billed 8).
      const five = await h.rest(
        '/v1/record_transaction',
        call('ep-1', 'alice', {
          timestamp_auth: '1763912344.900000',
          timestamp_begin: '1763912345.123456',
          timestamp_end: '1763912350.123456',
        }),
      );
      expect(five.body).toEqual({ ok: true, reason: null, transaction_tag: 'ep-1', account_tag: 'alice' });
      expect(await transactions().findOne({ account_tag: 'alice', transaction_tag: 'ep-1' })).toMatchObject({
        timestamp_auth: new Date(1763912344900),
        timestamp_begin: new Date(1763912345123),
        timestamp_end: new Date(1763912350123),
        duration: 5,
        fee: 5n,
      });
      // JSON numbers, as a proxy's jansson_set("real", ...) sends them.
      expect(
        (await h.rest('/v1/record_transaction', call('ep-2', 'alice', { timestamp_begin: 1763912345.1, timestamp_end: 1763912352.100001 })))
          .body,
      ).toMatchObject({ ok: true });
      expect(await transactions().findOne({ account_tag: 'alice', transaction_tag: 'ep-2' })).toMatchObject({ duration: 7, fee: 7n });
      const gql = await h.gql(
        `mutation { recordTransaction(transaction_tag: "ep-3", account_tag: "alice", source: "1", destination: "393299", timestamp_begin: "1763912345.999999", timestamp_end: "1763912346.999999") { ok } }`,
      );
      expect(gql.body).toEqual({ data: { recordTransaction: { ok: true } } });
      expect(await transactions().findOne({ account_tag: 'alice', transaction_tag: 'ep-3' })).toMatchObject({
        timestamp_begin: new Date(1763912346000),
        duration: 1,
        fee: 1n,
      });
    });

    it('begin and end take them too', async () => {
      await h.rest('/v1/begin_transaction', call('ep-4', 'alice', { timestamp_begin: '1763912400.000000' }));
      await h.rest('/v1/end_transaction', { transaction_tag: 'ep-4', account_tag: 'alice', timestamp_end: 1763912430 });
      await waitFor(
        () => transactions().findOne({ account_tag: 'alice', transaction_tag: 'ep-4', state: 'charged' }),
        'processing of ep-4',
      );
      expect(await transactions().findOne({ account_tag: 'alice', transaction_tag: 'ep-4' })).toMatchObject({
        timestamp_begin: new Date(1763912400000),
        duration: 30,
        fee: 30n,
      });
    });

    it('a bad epoch is BAD_USER_INPUT naming the field, and nothing is recorded', async () => {
      const cases: Array<[string, unknown]> = [
        ['timestamp_end', '1763912350123'], // milliseconds sent as seconds
        ['timestamp_begin', '1763912345.1234567'],
        ['timestamp_begin', 946684799],
        ['timestamp_auth', '-1763912345'],
      ];
      for (const [field, value] of cases) {
        const response = await h.rest(
          '/v1/record_transaction',
          call('ep-bad', 'alice', { timestamp_begin: '1763912345', timestamp_end: '1763912350', [field]: value }),
        );
        expect({ field, value, response }).toEqual({
          field,
          value,
          response: {
            status: 400,
            body: { error: { code: 'BAD_USER_INPUT', field, message: expect.stringMatching(new RegExp(`^${field}: `)) } },
          },
        });
      }
      const gql = await h.gql(
        `mutation { recordTransaction(transaction_tag: "ep-bad", account_tag: "alice", source: "1", destination: "39", timestamp_begin: "4133980800", timestamp_end: "4133980805") { ok } }`,
      );
      expect(gql.body.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT', field: 'timestamp_begin' } });
      // GraphQL arguments are Strings: a number literal is a validation error of the document.
      const literal = await h.gql(
        `mutation { recordTransaction(transaction_tag: "ep-bad", account_tag: "alice", source: "1", destination: "39", timestamp_begin: 1763912345, timestamp_end: "1763912350") { ok } }`,
      );
      expect(literal.status).toBe(400);
      expect(await transactions().countDocuments({ transaction_tag: 'ep-bad' })).toBe(0);
    });
  });
});

describe("the agent's own answers (no worker answered) carry the fields too", () => {
  let h: AgentHarness;

  beforeAll(async () => {
    h = await startAgentHarness(0, { AGENT_TIMEOUT_MS: '300' });
  });

  afterAll(() => h?.close());

  it('TIMEOUT: the request identifiers, no refusing account', async () => {
    expect(
      (await h.rest('/v1/authorization', { transaction_tag: 'to-1', account_tag: 'sip:alice@pbx', destination: '393299' })).body,
    ).toEqual({
      authorized: false,
      unauthorized_reason: 'TIMEOUT',
      max_available_units: 0,
      balance: null,
      carriers: [],
      transaction_tag: 'to-1',
      account_tag: 'alice',
      destination_account_tag: null,
      authorized_destination: null,
      unauthorized_account_tag: null,
    });
    expect(
      (await h.rest('/v1/begin_transaction', { transaction_tag: 'to-2', account_tag: 'alice', source: '1', destination: '393299' })).body,
    ).toEqual({
      ok: false,
      reason: 'TIMEOUT',
      transaction_tag: 'to-2',
      account_tag: 'alice',
    });
  });
});
