import { ApiHarness, expectError, startApi } from './api-harness';
import { snapshotOf } from '../../../src/shared/domain/rating';

const FIELDS = `id transaction_tag account_tag source source_ip destination carrier_ip tags authorized unauthorized_reason
  destination_rate { pricelist_tag carrier_tag prefix connect_fee rate rate_increment interval_start description }
  timestamp_auth timestamp_begin timestamp_end inbound failed duration fee`;

describe('API transactions', () => {
  let api: ApiHarness;
  const balanceOf = async (tag: string) => (await api.ctx.mongo.collections.accounts.findOne({ account_tag: tag }))?.balance;

  beforeAll(async () => {
    api = await startApi();
    await api.ok(`mutation {
      a: createAccount(account_tag: "acc", balance: 100, name: "Acc") { id }
      b: createAccount(account_tag: "acc2", balance: 100) { id }
    }`);
  });

  afterAll(async () => {
    await api.close();
  });

  it('creates a full record as given, without any balance effect, and resolves its account', async () => {
    const { createTransaction } =
      await api.ok(`mutation { createTransaction(transaction_tag: "t-1", account_tag: "acc", source: "100", source_ip: "192.0.2.1",
      destination: "4420", carrier_ip: "10.0.0.1:5060", tags: ["imported"], authorized: true, unauthorized_reason: null,
      destination_rate: { pricelist_tag: "pl", carrier_tag: "cr", prefix: "44", connect_fee: 0, rate: 20, rate_increment: 60, interval_start: 0 },
      timestamp_auth: "2024-03-01T10:00:00", timestamp_begin: "2024-03-01T10:00:01Z", timestamp_end: "2024-03-01T10:00:39Z",
      duration: 38, fee: 20) { ${FIELDS} account { account_tag name } } }`);
    expect(createTransaction).toEqual({
      id: expect.any(String),
      transaction_tag: 't-1',
      account_tag: 'acc',
      source: '100',
      source_ip: '192.0.2.1',
      destination: '4420',
      carrier_ip: '10.0.0.1:5060',
      tags: ['imported'],
      authorized: true,
      unauthorized_reason: null,
      destination_rate: {
        pricelist_tag: 'pl',
        carrier_tag: 'cr',
        prefix: '44',
        connect_fee: 0,
        rate: 20,
        rate_increment: 60,
        interval_start: 0,
        description: null,
      },
      timestamp_auth: '2024-03-01T10:00:00Z',
      timestamp_begin: '2024-03-01T10:00:01Z',
      timestamp_end: '2024-03-01T10:00:39Z',
      inbound: false,
      failed: false,
      duration: 38,
      fee: 20,
      account: { account_tag: 'acc', name: 'Acc' },
    });
    expect(await balanceOf('acc')).toBe(100n);
    const stored = await api.ctx.mongo.collections.transactions.findOne({ _id: createTransaction.id });
    expect(stored?.fee).toBe(20n);
    expect(stored?.timestamp_begin).toEqual(new Date('2024-03-01T10:00:01Z'));
  });

  it('creates a minimal record with defaults', async () => {
    const { createTransaction } = await api.ok(
      `mutation { createTransaction(transaction_tag: "t-min", account_tag: "acc") { ${FIELDS} } }`,
    );
    expect(createTransaction).toMatchObject({
      authorized: null,
      destination_rate: null,
      timestamp_begin: null,
      inbound: false,
      failed: false,
      duration: 0,
      fee: 0,
      tags: null,
    });
  });

  it('reads by id or by account_tag and transaction_tag; null when none', async () => {
    const { Transaction } = await api.ok('{ Transaction(account_tag: "acc", transaction_tag: "t-1") { id transaction_tag } }');
    expect(Transaction.transaction_tag).toBe('t-1');
    expect((await api.ok(`{ Transaction(id: "${Transaction.id}") { transaction_tag } }`)).Transaction).toEqual({ transaction_tag: 't-1' });
    expect((await api.ok('{ Transaction(account_tag: "acc2", transaction_tag: "t-1") { id } }')).Transaction).toBeNull();
    expect((await api.ok('{ Transaction(id: "nope") { id } }')).Transaction).toBeNull();
    expectError(await api.gql('{ Transaction(transaction_tag: "t-1") { id } }'), 'BAD_USER_INPUT', 'id');
  });

  it.each([
    ['a negative fee', 'fee: -1', 'fee'],
    ['a negative duration', 'duration: -1', 'duration'],
    ['a rate snapshot without rate', 'destination_rate: { pricelist_tag: "p", carrier_tag: "c", prefix: "1" }', 'destination_rate.rate'],
    [
      'a rate snapshot with a negative connect fee',
      'destination_rate: { pricelist_tag: "p", carrier_tag: "c", prefix: "1", rate: 1, connect_fee: -1 }',
      'destination_rate.connect_fee',
    ],
    ['no account_tag', 'account_tag: null', 'account_tag'],
  ])('refuses %s with BAD_USER_INPUT', async (_what, args, field) => {
    const withAccount = args.startsWith('account_tag') ? args : `account_tag: "acc", ${args}`;
    expectError(await api.gql(`mutation { createTransaction(transaction_tag: "t-bad", ${withAccount}) { id } }`), 'BAD_USER_INPUT', field);
    expect(await api.ctx.mongo.collections.transactions.countDocuments({ transaction_tag: 't-bad' })).toBe(0);
  });

  it('refuses an unknown account with INVALID_REFERENCE and a repeated tag with DUPLICATE', async () => {
    expectError(
      await api.gql('mutation { createTransaction(transaction_tag: "t-x", account_tag: "nope") { id } }'),
      'INVALID_REFERENCE',
      'account_tag',
    );
    expectError(
      await api.gql('mutation { createTransaction(transaction_tag: "t-1", account_tag: "acc") { id } }'),
      'DUPLICATE',
      'account_tag,transaction_tag',
    );
    // The same transaction tag under another account is a different record.
    expect(
      (await api.ok('mutation { createTransaction(transaction_tag: "t-1", account_tag: "acc2") { account_tag } }')).createTransaction,
    ).toEqual({ account_tag: 'acc2' });
  });

  it('updates by id (tags are changes) or by account_tag and transaction_tag, without balance effect', async () => {
    const { createTransaction: t } = await api.ok(
      'mutation { createTransaction(transaction_tag: "t-u", account_tag: "acc", fee: 5, tags: ["a"]) { id } }',
    );
    expect(
      (
        await api.ok(
          `mutation { updateTransaction(id: "${t.id}", transaction_tag: "t-u2", fee: 7, tags: null) { transaction_tag fee tags } }`,
        )
      ).updateTransaction,
    ).toEqual({
      transaction_tag: 't-u2',
      fee: 7,
      tags: null,
    });
    expect(
      (
        await api.ok(
          'mutation { updateTransaction(account_tag: "acc", transaction_tag: "t-u2", failed: true, duration: 3) { id failed duration } }',
        )
      ).updateTransaction,
    ).toEqual({
      id: t.id,
      failed: true,
      duration: 3,
    });
    expect(
      (await api.ok(`mutation { updateTransaction(id: "${t.id}", account_tag: "acc2") { account { account_tag } } }`)).updateTransaction,
    ).toEqual({ account: { account_tag: 'acc2' } });
    expectError(
      await api.gql(`mutation { updateTransaction(id: "${t.id}", account_tag: "nope") { id } }`),
      'INVALID_REFERENCE',
      'account_tag',
    );
    expectError(await api.gql(`mutation { updateTransaction(id: "${t.id}", inbound: null) { id } }`), 'BAD_USER_INPUT', 'inbound');
    expectError(await api.gql('mutation { updateTransaction(account_tag: "acc", transaction_tag: "nope", fee: 1) { id } }'), 'NOT_FOUND');
    expect(await balanceOf('acc')).toBe(100n);
    expect(await balanceOf('acc2')).toBe(100n);
  });

  it('deletes by id or by account_tag and transaction_tag, returning the record, without balance effect', async () => {
    const { a, b } = await api.ok(`mutation {
      a: createTransaction(transaction_tag: "t-d1", account_tag: "acc", fee: 9) { id }
      b: createTransaction(transaction_tag: "t-d2", account_tag: "acc", fee: 9) { id }
    }`);
    expect((await api.ok(`mutation { deleteTransaction(id: "${a.id}") { id transaction_tag fee } }`)).deleteTransaction).toEqual({
      id: a.id,
      transaction_tag: 't-d1',
      fee: 9,
    });
    expect((await api.ok('mutation { deleteTransaction(account_tag: "acc", transaction_tag: "t-d2") { id } }')).deleteTransaction).toEqual({
      id: b.id,
    });
    expect((await api.ok('{ Transaction(account_tag: "acc", transaction_tag: "t-d2") { id } }')).Transaction).toBeNull();
    expectError(await api.gql(`mutation { deleteTransaction(id: "${a.id}") { id } }`), 'NOT_FOUND');
    expect(await balanceOf('acc')).toBe(100n);
  });

  // The engine's records (state set): a later refund or rerating moves what the record says was
  // charged, so its money and identity fields change only through those (docs/API.md, "Transactions").
  describe('records the engine charged', () => {
    const engineRecord = async (tag: string, state: 'charged' | 'pending' | 'rolling_back', extra: object = {}) => {
      const { createTransaction } = await api.ok(
        `mutation { createTransaction(transaction_tag: "${tag}", account_tag: "acc", destination: "4420", duration: 60, fee: 100) { id } }`,
      );
      await api.ctx.mongo.collections.transactions.updateOne({ _id: createTransaction.id }, { $set: { state, ...extra } });
      return createTransaction.id as string;
    };

    it.each([
      ['fee', 'fee: 120'],
      ['account_tag', 'account_tag: "acc2"'],
      ['transaction_tag', 'transaction_tag: "moved"'],
      ['duration', 'duration: 90'],
      ['timestamp_begin', 'timestamp_begin: "2024-03-01T10:00:00Z"'],
      // Rerating prices the call again from these: another number is another call.
      ['destination', 'destination: "1900555"'],
      ['carrier_ip', 'carrier_ip: "10.9.9.9:5060"'],
    ])('refuses a change of %s, and changes nothing', async (field, change) => {
      const id = await engineRecord(`e-upd-${field}`, 'charged');
      expectError(await api.gql(`mutation { updateTransaction(id: "${id}", ${change}) { id } }`), 'BAD_USER_INPUT', field);
      expect(await api.ctx.mongo.collections.transactions.findOne({ _id: id })).toMatchObject({
        fee: 100n,
        account_tag: 'acc',
        transaction_tag: `e-upd-${field}`,
        duration: 60,
      });
    });

    it('takes other fields, and the money fields set to what they are', async () => {
      const id = await engineRecord('e-upd-ok', 'charged');
      const { updateTransaction } = await api.ok(
        `mutation { updateTransaction(id: "${id}", failed: true, tags: ["checked"], fee: 100) { failed tags fee } }`,
      );
      expect(updateTransaction).toEqual({ failed: true, tags: ['checked'], fee: 100 });
    });

    it('refuses to edit one the engine is rerating: its fee is about to change, and the edit would write the old one back', async () => {
      const intent = { run: 'r2', at: new Date(), fee_before: 100n, fee_after: 90n, rate: null, segments: null };
      const id = await engineRecord('e-upd-rerating', 'charged', { rerate: intent });
      expectError(
        await api.gql(`mutation { updateTransaction(id: "${id}", tags: ["checked"], fee: 100) { id } }`),
        'BAD_USER_INPUT',
        'transaction',
      );
      expect(await api.ctx.mongo.collections.transactions.findOne({ _id: id })).toMatchObject({ fee: 100n, tags: null, rerate: intent });
    });

    it.each([
      ['pending', {}],
      ['rolling_back', {}],
      ['charged', { rerate: { run: 'r1', at: new Date(), fee_before: 100n, fee_after: 90n, rate: null, segments: null } }],
    ])('refuses to delete one the engine is still charging, refunding or rerating (%s)', async (state, extra) => {
      const id = await engineRecord(`e-del-${state}-${Object.keys(extra).length}`, state as 'pending', extra);
      expectError(await api.gql(`mutation { deleteTransaction(id: "${id}") { id } }`), 'BAD_USER_INPUT');
      expect(await api.ctx.mongo.collections.transactions.findOne({ _id: id })).not.toBeNull();
    });

    it('refuses to delete one a rollback answered ok has still to refund (its worker died before the refund)', async () => {
      const id = await engineRecord('e-del-rollback', 'charged');
      const rollback = {
        _id: 'rollback-job-e-del',
        op: 'rollback',
        state: 'done' as const,
        account_tag: 'acc',
        transaction_tag: 'e-del-rollback',
        result: null,
        targets: [{ account_tag: 'acc', record_id: id }],
        at: new Date(),
      };
      await api.ctx.mongo.collections.outcomes.insertOne(rollback);
      const refused = await api.gql(`mutation { deleteTransaction(id: "${id}") { id } }`);
      expect(expectError(refused, 'BAD_USER_INPUT', 'transaction').message).toContain('rollback');
      expect(await api.ctx.mongo.collections.transactions.findOne({ _id: id })).not.toBeNull();
      // Carried out, the record goes like any other.
      await api.ctx.mongo.collections.outcomes.updateOne({ _id: rollback._id }, { $set: { applied_at: new Date() } });
      expect((await api.ok(`mutation { deleteTransaction(id: "${id}") { id } }`)).deleteTransaction).toEqual({ id });
    });

    it('so does it when the rollback took the running entry that processing then recorded under the same id', async () => {
      const id = await engineRecord('e-del-rollback-entry', 'charged');
      await api.ctx.mongo.collections.outcomes.insertOne({
        _id: 'rollback-job-e-del-entry',
        op: 'rollback',
        state: 'done',
        account_tag: 'acc',
        transaction_tag: 'e-del-rollback-entry',
        result: null,
        targets: [{ account_tag: 'acc', entry_id: id }],
        at: new Date(),
      });
      expectError(await api.gql(`mutation { deleteTransaction(id: "${id}") { id } }`), 'BAD_USER_INPUT', 'transaction');
      expect(await api.ctx.mongo.collections.transactions.findOne({ _id: id })).not.toBeNull();
    });

    it('takes back an engine rate snapshot unchanged as the console or react-admin send it (another key order, no timed prices)', async () => {
      const snapshot = snapshotOf({
        pricelist_tag: 'pl',
        carrier_tag: 'cr',
        prefix: '44',
        description: 'UK',
        connect_fee: 5,
        rate: 20,
        rate_increment: 60,
        interval_start: 0,
        timed: { time_zone: 'Europe/London', prices: [], holidays: [] },
      });
      const id = await engineRecord('e-upd-same-rate', 'charged', { destination_rate: snapshot });
      const { updateTransaction } = await api.ok(
        `mutation { updateTransaction(id: "${id}", tags: ["checked"],
          destination_rate: { rate: 20, prefix: "44", interval_start: 0, connect_fee: 5, pricelist_tag: "pl", rate_increment: 60, carrier_tag: "cr", description: "UK" }) { tags } }`,
      );
      expect(updateTransaction).toEqual({ tags: ['checked'] });
      // The snapshot is the engine's, kept whole (its timed prices too).
      expect((await api.ctx.mongo.collections.transactions.findOne({ _id: id }))?.destination_rate).toEqual(snapshot);
      expectError(
        await api.gql(`mutation { updateTransaction(id: "${id}",
          destination_rate: { rate: 21, prefix: "44", interval_start: 0, connect_fee: 5, pricelist_tag: "pl", rate_increment: 60, carrier_tag: "cr", description: "UK" }) { tags } }`),
        'BAD_USER_INPUT',
        'destination_rate',
      );
    });
  });

  it('filters on account_tag, transaction_tag, inbound and a timestamp_begin range', async () => {
    await api.ok(`mutation {
      a: createTransaction(transaction_tag: "f-1", account_tag: "acc2", timestamp_begin: "2024-05-01T00:00:00") { id }
      b: createTransaction(transaction_tag: "f-2", account_tag: "acc2", timestamp_begin: "2024-05-02T00:00:00", inbound: true) { id }
      c: createTransaction(transaction_tag: "f-3", account_tag: "acc2", timestamp_begin: "2024-05-03T00:00:00") { id }
    }`);
    const tags = async (filter: string) =>
      (await api.ok(`{ allTransactions(filter: ${filter}, sortField: "timestamp_begin") { transaction_tag } }`)).allTransactions.map(
        (t: { transaction_tag: string }) => t.transaction_tag,
      );
    expect(await tags('{ account_tag: "acc2", timestamp_begin_gte: "2024-05-02T00:00:00" }')).toEqual(['f-2', 'f-3']);
    expect(
      await tags('{ account_tag: "acc2", timestamp_begin_gt: "2024-05-01T00:00:00", timestamp_begin_lt: "2024-05-03T00:00:00Z" }'),
    ).toEqual(['f-2']);
    expect(await tags('{ account_tag: ["acc2"], timestamp_begin_lte: "2024-05-02T00:00:00" }')).toEqual(['f-1', 'f-2']);
    expect(await tags('{ account_tag: "acc2", inbound: true }')).toEqual(['f-2']);
    expect(await tags('{ transaction_tag: ["f-1", "f-3"] }')).toEqual(['f-1', 'f-3']);
    const counts = await api.ok(`{
      a: _allTransactionsMeta(filter: { account_tag: "acc2", timestamp_begin_gte: "2024-05-01T00:00:00" }) { count }
      b: _allTransactions(filter: { account_tag: "acc2", timestamp_begin_gte: "2024-05-01T00:00:00" }) { count }
    }`);
    expect(counts).toEqual({ a: { count: 3 }, b: { count: 3 } });
  });

  it('answers account null when the account no longer exists', async () => {
    await api.ok('mutation { createAccount(account_tag: "gone") { id } }');
    await api.ok('mutation { createTransaction(transaction_tag: "t-gone", account_tag: "gone") { id } }');
    await api.ok('mutation { deleteAccount(account_tag: "gone") { id } }');
    expect((await api.ok('{ Transaction(account_tag: "gone", transaction_tag: "t-gone") { account { id } } }')).Transaction).toEqual({
      account: null,
    });
  });
});
