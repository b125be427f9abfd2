import type { RunningTransaction } from '../../../src/shared/domain/types';
import { ApiHarness, expectError, startApi } from './api-harness';

const SCALARS = `id account_tag type balance active max_concurrent_transactions name notification_email notification_mobile
  carrier_tags carrier_tags_override customer_tag pricelist_tags tags balance_alert_threshold`;

function runningEntry(tag: string, overrides: Partial<RunningTransaction> = {}): RunningTransaction {
  return {
    transaction_tag: tag,
    id: `entry-${tag}`,
    origin_account_tag: 'caller',
    call_id: `caller/${tag}`,
    source: '100',
    destination: '4420',
    carrier_ip: 'gw.example:5060',
    rate: { pricelist_tag: 'pl', carrier_tag: 'cr', prefix: '44', connect_fee: 0, rate: 20, rate_increment: 60, interval_start: 0 },
    in_progress: true,
    inbound: false,
    timestamp_begin: new Date(),
    timestamp_end: null,
    ...overrides,
  };
}

describe('API accounts', () => {
  let api: ApiHarness;
  const accounts = () => api.ctx.mongo.collections.accounts;
  const addRunning = (accountTag: string, entry: RunningTransaction) =>
    accounts().updateOne({ account_tag: accountTag }, { $push: { running_transactions: entry } });

  beforeAll(async () => {
    api = await startApi({ LONG_CALL_SECONDS: '3600' });
    await api.ok(`mutation {
      p: createPricelist(pricelist_tag: "pl", currency: USD) { id }
      p2: createPricelist(pricelist_tag: "pl2", currency: USD) { id }
      c: createCarrier(carrier_tag: "cr", host: "h", port: 1) { id }
      c2: createCarrier(carrier_tag: "cr2", host: "h", port: 2) { id }
    }`);
  });

  afterAll(async () => {
    await api.close();
  });

  it('creates with defaults: PREPAID, balance 0, active, no limit, unset lists null, linked_accounts and running_transactions []', async () => {
    const { createAccount } = await api.ok(
      `mutation { createAccount(account_tag: "a-min") { ${SCALARS} linked_accounts { id } running_transactions { transaction_tag } } }`,
    );
    expect(createAccount).toEqual({
      id: expect.any(String),
      account_tag: 'a-min',
      type: 'PREPAID',
      balance: 0,
      active: true,
      max_concurrent_transactions: null,
      name: null,
      notification_email: null,
      notification_mobile: null,
      carrier_tags: null,
      carrier_tags_override: null,
      customer_tag: null,
      pricelist_tags: null,
      tags: null,
      balance_alert_threshold: null,
      linked_accounts: [],
      running_transactions: [],
    });
    const stored = await accounts().findOne({ account_tag: 'a-min' });
    expect(stored).toMatchObject({ balance: 0n, running_transactions: [], linked_accounts: [] });
  });

  it('creates with every field; BigInt keeps 64-bit values exact (a string beyond 2^53)', async () => {
    const { createAccount } =
      await api.ok(`mutation { createAccount(account_tag: "a-full", type: POSTPAID, balance: "9007199254740993", active: false,
      max_concurrent_transactions: 3, name: "Full", notification_email: "ops@example.com", notification_mobile: "+44 20 7946 0958",
      carrier_tags: ["cr2", "cr"], carrier_tags_override: ["cr"], customer_tag: "cust-1", pricelist_tags: ["pl", "pl2"], tags: ["vip"],
      balance_alert_threshold: -500) { ${SCALARS} } }`);
    expect(createAccount).toEqual({
      id: expect.any(String),
      account_tag: 'a-full',
      type: 'POSTPAID',
      balance: '9007199254740993',
      active: false,
      max_concurrent_transactions: 3,
      name: 'Full',
      notification_email: 'ops@example.com',
      notification_mobile: '+44 20 7946 0958',
      carrier_tags: ['cr2', 'cr'],
      carrier_tags_override: ['cr'],
      customer_tag: 'cust-1',
      pricelist_tags: ['pl', 'pl2'],
      tags: ['vip'],
      balance_alert_threshold: -500,
    });
    expect((await accounts().findOne({ account_tag: 'a-full' }))?.balance).toBe(9007199254740993n);
  });

  it('reads by id or tag; null when none', async () => {
    const { Account } = await api.ok('{ Account(account_tag: "a-min") { id account_tag } }');
    expect((await api.ok(`{ Account(id: "${Account.id}") { account_tag } }`)).Account).toEqual({ account_tag: 'a-min' });
    expect((await api.ok('{ Account(account_tag: "nope") { id } }')).Account).toBeNull();
  });

  it.each([
    ['a bad e-mail', 'notification_email: "not-an-email"', 'notification_email'],
    ['a bad mobile number', 'notification_mobile: "call me"', 'notification_mobile'],
    ['a negative concurrency limit', 'max_concurrent_transactions: -1', 'max_concurrent_transactions'],
    ['a repeated carrier tag', 'carrier_tags: ["cr", "cr"]', 'carrier_tags'],
    ['an empty pricelist tag', 'pricelist_tags: [""]', 'pricelist_tags'],
    ['linked_accounts and linked_accountsIds together', 'linked_accounts: [], linked_accountsIds: []', 'linked_accountsIds'],
  ])('refuses %s with BAD_USER_INPUT', async (_what, args, field) => {
    expectError(await api.gql(`mutation { createAccount(account_tag: "a-bad", ${args}) { id } }`), 'BAD_USER_INPUT', field);
    expect(await accounts().countDocuments({ account_tag: 'a-bad' })).toBe(0);
  });

  it.each([
    ['a decimal', '"12.5"'],
    ['a float literal', '12.5'],
    ['a value beyond 64 bits', '"9223372036854775808"'],
  ])('refuses a balance that is %s with BAD_USER_INPUT naming balance (HTTP 400)', async (_what, value) => {
    const answer = await api.gql(`mutation { createAccount(account_tag: "a-bad", balance: ${value}) { id } }`);
    expect(answer.status).toBe(400);
    expectError(answer, 'BAD_USER_INPUT', 'balance');
  });

  it.each([
    ['a missing pricelist', 'pricelist_tags: ["pl", "nope"]', 'pricelist_tags'],
    ['a missing preferred carrier', 'carrier_tags: ["nope"]', 'carrier_tags'],
    ['a missing forced carrier', 'carrier_tags_override: ["nope"]', 'carrier_tags_override'],
    ['a missing linked account', 'linked_accounts: ["nope"]', 'linked_accounts'],
    ['a missing linked account id', 'linked_accountsIds: ["0b0a3c1e-8a4d-4f6b-9c2a-1d3e5f7a9b0c"]', 'linked_accountsIds'],
    ['a link to itself', 'linked_accounts: ["a-bad"]', 'linked_accounts'],
  ])('refuses %s with INVALID_REFERENCE, storing nothing', async (_what, args, field) => {
    expectError(await api.gql(`mutation { createAccount(account_tag: "a-bad", ${args}) { id } }`), 'INVALID_REFERENCE', field);
    expect(await accounts().countDocuments({ account_tag: 'a-bad' })).toBe(0);
  });

  it('refuses a duplicate tag with DUPLICATE', async () => {
    expectError(await api.gql('mutation { createAccount(account_tag: "a-min") { id } }'), 'DUPLICATE', 'account_tag');
  });

  describe('linked accounts', () => {
    it('links parents by tag or by id and answers them as account objects in order', async () => {
      const { parent, grand } = await api.ok(`mutation {
        grand: createAccount(account_tag: "l-grand", name: "Grand", balance: 7) { id }
        parent: createAccount(account_tag: "l-parent", name: "Parent", type: POSTPAID, balance: 5) { id }
      }`);
      await api.ok('mutation { updateAccount(account_tag: "l-parent", linked_accounts: ["l-grand"]) { id } }');
      const { createAccount } =
        await api.ok(`mutation { createAccount(account_tag: "l-child", linked_accountsIds: ["${parent.id}", "${grand.id}"]) {
        linked_accounts { id account_tag name type balance linked_accounts { account_tag } } } }`);
      expect(createAccount.linked_accounts).toEqual([
        {
          id: parent.id,
          account_tag: 'l-parent',
          name: 'Parent',
          type: 'POSTPAID',
          balance: 5,
          linked_accounts: [{ account_tag: 'l-grand' }],
        },
        { id: grand.id, account_tag: 'l-grand', name: 'Grand', type: 'PREPAID', balance: 7, linked_accounts: [] },
      ]);
      expect((await accounts().findOne({ account_tag: 'l-child' }))?.linked_accounts).toEqual(['l-parent', 'l-grand']);
    });

    it('refuses cycles, direct or through ancestors, and links to itself', async () => {
      expectError(
        await api.gql('mutation { updateAccount(account_tag: "l-grand", linked_accounts: ["l-child"]) { id } }'),
        'INVALID_REFERENCE',
        'linked_accounts',
      );
      expectError(
        await api.gql('mutation { updateAccount(account_tag: "l-grand", linked_accounts: ["l-parent"]) { id } }'),
        'INVALID_REFERENCE',
        'linked_accounts',
      );
      expectError(
        await api.gql('mutation { updateAccount(account_tag: "l-grand", linked_accounts: ["l-grand"]) { id } }'),
        'INVALID_REFERENCE',
        'linked_accounts',
      );
      const { Account } = await api.ok('{ Account(account_tag: "l-child") { id } }');
      expectError(
        await api.gql(`mutation { updateAccount(account_tag: "l-grand", linked_accountsIds: ["${Account.id}"]) { id } }`),
        'INVALID_REFERENCE',
        'linked_accountsIds',
      );
      expect((await accounts().findOne({ account_tag: 'l-grand' }))?.linked_accounts).toEqual([]);
    });

    it('refuses to delete or rename an account others link', async () => {
      expectError(await api.gql('mutation { deleteAccount(account_tag: "l-grand") { id } }'), 'INVALID_REFERENCE', 'account_tag');
      const { Account } = await api.ok('{ Account(account_tag: "l-grand") { id } }');
      expectError(
        await api.gql(`mutation { updateAccount(id: "${Account.id}", account_tag: "l-renamed") { id } }`),
        'INVALID_REFERENCE',
        'account_tag',
      );
    });

    it('clears links with null (answered as [])', async () => {
      const { updateAccount } = await api.ok(
        'mutation { updateAccount(account_tag: "l-child", linked_accounts: null) { linked_accounts { id } } }',
      );
      expect(updateAccount.linked_accounts).toEqual([]);
    });
  });

  describe('update', () => {
    let id: string;
    beforeAll(async () => {
      id = (
        await api.ok('mutation { createAccount(account_tag: "u-1", name: "One", balance: 10, pricelist_tags: ["pl"], tags: ["x"]) { id } }')
      ).createAccount.id;
    });

    it('renames by id, and updates by tag', async () => {
      expect((await api.ok(`mutation { updateAccount(id: "${id}", account_tag: "u-2") { account_tag } }`)).updateAccount).toEqual({
        account_tag: 'u-2',
      });
      expect(
        (await api.ok('mutation { updateAccount(account_tag: "u-2", customer_tag: "c-9") { id customer_tag } }')).updateAccount,
      ).toEqual({ id, customer_tag: 'c-9' });
    });

    it('changes only the given fields; null clears; every update bumps rev; a new balance is a ledger adjustment', async () => {
      const revBefore = (await accounts().findOne({ _id: id }))?.rev ?? 0;
      const { updateAccount } = await api.ok(
        `mutation { updateAccount(id: "${id}", name: null, tags: null, balance: 25, max_concurrent_transactions: 2) { ${SCALARS} } }`,
      );
      expect(updateAccount).toMatchObject({
        account_tag: 'u-2',
        name: null,
        tags: null,
        balance: 25,
        max_concurrent_transactions: 2,
        pricelist_tags: ['pl'],
      });
      // One write for the fields, one for the balance (through the ledger).
      expect((await accounts().findOne({ _id: id }))?.rev).toBe(revBefore + 2);
      const adjustments = await api.ctx.mongo.collections.ledger.find({ account_tag: 'u-2' }).toArray();
      expect(adjustments).toEqual([expect.objectContaining({ kind: 'adjust', amount: 15n, ref: 'updateAccount' })]);
      expect((await accounts().findOne({ _id: id }))?.opening_balance).toBe(10n);
    });

    it('refuses invalid values and missing references, changing nothing', async () => {
      expectError(await api.gql(`mutation { updateAccount(id: "${id}", balance: 99, type: null) { id } }`), 'BAD_USER_INPUT', 'type');
      expectError(
        await api.gql(`mutation { updateAccount(id: "${id}", balance: 99, pricelist_tags: ["nope"]) { id } }`),
        'INVALID_REFERENCE',
        'pricelist_tags',
      );
      expect((await accounts().findOne({ _id: id }))?.balance).toBe(25n);
      // Each balance fits in 64 bits, the adjustment between them would not: refused, not written wrapped.
      await api.ok(`mutation { updateAccount(id: "${id}", balance: "-10") { id } }`);
      const ledgerBefore = await api.ctx.mongo.collections.ledger.countDocuments({ account_tag: 'u-2' });
      expectError(
        await api.gql(`mutation { updateAccount(id: "${id}", balance: "9223372036854775807", name: "Changed") { id } }`),
        'BAD_USER_INPUT',
        'balance',
      );
      expect(await accounts().findOne({ _id: id })).toMatchObject({ balance: -10n });
      expect((await accounts().findOne({ _id: id }))?.name).not.toBe('Changed');
      expect(await api.ctx.mongo.collections.ledger.countDocuments({ account_tag: 'u-2' })).toBe(ledgerBefore);
      await api.ok(`mutation { updateAccount(id: "${id}", balance: 25) { id } }`);
      expectError(await api.gql('mutation { updateAccount(account_tag: "nope", balance: 1) { id } }'), 'NOT_FOUND');
      expectError(await api.gql('mutation { updateAccount(account_tag: "u-2", active: null) { id } }'), 'BAD_USER_INPUT', 'active');
    });

    it('refuses a rename while calls run on the account, records carry its tag or its ledger holds entries', async () => {
      const fresh = (await api.ok('mutation { createAccount(account_tag: "r-1", balance: 10) { id } }')).createAccount.id as string;
      await addRunning('r-1', runningEntry('t-rename'));
      expectError(
        await api.gql(`mutation { updateAccount(id: "${fresh}", account_tag: "r-2") { id } }`),
        'INVALID_REFERENCE',
        'account_tag',
      );
      await accounts().updateOne({ _id: fresh }, { $set: { running_transactions: [] } });
      await api.ok('mutation { createTransaction(account_tag: "r-1", transaction_tag: "t-rec") { id } }');
      expectError(
        await api.gql(`mutation { updateAccount(id: "${fresh}", account_tag: "r-2") { id } }`),
        'INVALID_REFERENCE',
        'account_tag',
      );
      expect((await accounts().findOne({ _id: fresh }))?.account_tag).toBe('r-1');
      // u-2's balance moved through the ledger (above): its entries are under its tag, so it keeps it.
      expectError(await api.gql(`mutation { updateAccount(id: "${id}", account_tag: "u-3") { id } }`), 'INVALID_REFERENCE', 'account_tag');
      expect((await accounts().findOne({ _id: id }))?.account_tag).toBe('u-2');
    });
  });

  describe('incrementAccountBalance', () => {
    beforeAll(async () => {
      await api.ok('mutation { createAccount(account_tag: "b-1", balance: 100) { id } }');
    });

    it('adds and takes off atomically, returning the account', async () => {
      expect(
        (await api.ok('mutation { incrementAccountBalance(account_tag: "b-1", amount: 50) { account_tag balance } }'))
          .incrementAccountBalance,
      ).toEqual({
        account_tag: 'b-1',
        balance: 150,
      });
      expect(
        (await api.ok('mutation { incrementAccountBalance(account_tag: "b-1", amount: "-200") { balance } }')).incrementAccountBalance,
      ).toEqual({ balance: -50 });
    });

    it('loses nothing under concurrent top-ups', async () => {
      const before = (await accounts().findOne({ account_tag: 'b-1' }))!.balance;
      await Promise.all(
        Array.from({ length: 40 }, () => api.ok('mutation { incrementAccountBalance(account_tag: "b-1", amount: 3) { id } }')),
      );
      expect((await accounts().findOne({ account_tag: 'b-1' }))!.balance).toBe(before + 120n);
    });

    it('answers NOT_FOUND for an unknown account and refuses a 64-bit overflow', async () => {
      expectError(await api.gql('mutation { incrementAccountBalance(account_tag: "nope", amount: 1) { id } }'), 'NOT_FOUND');
      const before = (await accounts().findOne({ account_tag: 'b-1' }))!.balance;
      expectError(
        await api.gql('mutation { incrementAccountBalance(account_tag: "b-1", amount: "9223372036854775807") { id } }'),
        'BAD_USER_INPUT',
        'amount',
      );
      expect((await accounts().findOne({ account_tag: 'b-1' }))!.balance).toBe(before);
      expectError(await api.gql('mutation { incrementAccountBalance(account_tag: "b-1") { id } }'), 'BAD_USER_INPUT', 'amount');
    });
  });

  describe('running transactions', () => {
    beforeAll(async () => {
      await api.ok(`mutation {
        a: createAccount(account_tag: "r-idle", customer_tag: "rc") { id }
        b: createAccount(account_tag: "r-busy", customer_tag: "rc", type: POSTPAID) { id }
        c: createAccount(account_tag: "r-stale", customer_tag: "rc", active: false) { id }
      }`);
      await addRunning('r-busy', runningEntry('t-1', { timestamp_begin: new Date('2030-01-01T00:00:00Z') }));
      await addRunning(
        'r-busy',
        runningEntry('t-2', {
          in_progress: false,
          inbound: true,
          rate: null,
          carrier_ip: '',
          timestamp_end: new Date('2030-01-01T00:01:00.5Z'),
          timestamp_begin: new Date(Date.now() - 7200_000),
        }),
      );
      await addRunning('r-stale', runningEntry('t-3', { timestamp_begin: new Date(Date.now() - 7200_000) }));
    });

    it('answers running entries as AccountTransaction (timestamp_end "" while running)', async () => {
      const { Account } = await api.ok(`{ Account(account_tag: "r-busy") { running_transactions {
        transaction_tag source destination carrier_ip destination_rate in_progress inbound timestamp_begin timestamp_end } } }`);
      expect(Account.running_transactions).toEqual([
        {
          transaction_tag: 't-1',
          source: '100',
          destination: '4420',
          carrier_ip: 'gw.example:5060',
          destination_rate: 20,
          in_progress: true,
          inbound: false,
          timestamp_begin: '2030-01-01T00:00:00Z',
          timestamp_end: '',
        },
        {
          transaction_tag: 't-2',
          source: '100',
          destination: '4420',
          carrier_ip: '',
          destination_rate: null,
          in_progress: false,
          inbound: true,
          timestamp_begin: expect.any(String),
          timestamp_end: '2030-01-01T00:01:00.500Z',
        },
      ]);
    });

    it('filters on running and long-running transactions', async () => {
      const tags = async (filter: string) =>
        (await api.ok(`{ allAccounts(filter: ${filter}, sortField: "account_tag") { account_tag } }`)).allAccounts.map(
          (a: { account_tag: string }) => a.account_tag,
        );
      expect(await tags('{ customer_tag: "rc", with_running_transactions: true }')).toEqual(['r-busy', 'r-stale']);
      expect(await tags('{ customer_tag: "rc", with_running_transactions: false }')).toEqual(['r-idle']);
      // r-busy's old entry has ended, its running one began recently: only r-stale has a long call in progress.
      expect(await tags('{ customer_tag: "rc", with_long_running_transactions: true }')).toEqual(['r-stale']);
      expect(await tags('{ customer_tag: "rc", with_long_running_transactions: false }')).toEqual(['r-busy', 'r-idle']);
      expect(await tags('{ customer_tag: ["rc"], type: POSTPAID }')).toEqual(['r-busy']);
      expect(await tags('{ customer_tag: "rc", active: false }')).toEqual(['r-stale']);
      expect(await tags('{ account_tag: ["r-idle", "r-stale"] }')).toEqual(['r-idle', 'r-stale']);
      expect(
        (await api.ok('{ _allAccountsMeta(filter: { customer_tag: "rc", with_running_transactions: true }) { count } }'))._allAccountsMeta,
      ).toEqual({ count: 2 });
    });

    it('refuses to delete an account with running transactions', async () => {
      expectError(await api.gql('mutation { deleteAccount(account_tag: "r-busy") { id } }'), 'INVALID_REFERENCE', 'account_tag');
      expect(await accounts().countDocuments({ account_tag: 'r-busy' })).toBe(1);
    });
  });

  /**
   * Work still under way for an account when it is deleted (a charge or refund not finished, a rollback
   * answered ok and not carried out, an import batch not settled) would land on whoever holds the tag
   * next: deletion waits for it, with a clear refusal that changes nothing.
   */
  it('refuses to delete an account with work under way, and deletes it once the work is done', async () => {
    const c = api.ctx.mongo.collections;
    for (const tag of ['w-pending', 'w-rollback', 'w-import'])
      await api.ok(`mutation { createAccount(account_tag: "${tag}", pricelist_tags: ["pl"], balance: 10) { id } }`);
    await c.transactions.insertOne({
      _id: 'w-pending-record',
      transaction_tag: 'wp',
      account_tag: 'w-pending',
      origin_account_tag: 'w-pending',
      source: null,
      source_ip: null,
      destination: '4420',
      carrier_ip: null,
      tags: null,
      authorized: true,
      unauthorized_reason: null,
      destination_rate: null,
      timestamp_auth: null,
      timestamp_begin: new Date(),
      timestamp_end: new Date(),
      inbound: false,
      failed: false,
      duration: 3,
      fee: 3n,
      state: 'pending',
      charged_by: 'record',
    });
    await c.outcomes.insertOne({
      _id: 'w-rollback-job',
      state: 'done',
      op: 'rollback',
      account_tag: 'w-rollback',
      transaction_tag: 'wr',
      result: null,
      targets: [{ account_tag: 'w-rollback', record_id: 'w-rollback-record' }],
      at: new Date(),
    });
    await c.importBatches.insertOne({
      _id: 'w-import-batch',
      settle_pending: true,
      debits: [{ account_tag: 'w-import', amount: 4n }],
    } as never);
    for (const [tag, what] of [
      ['w-pending', 'being charged'],
      ['w-rollback', 'rollback'],
      ['w-import', 'import'],
    ] as const) {
      const refused = await api.gql(`mutation { deleteAccount(account_tag: "${tag}") { id } }`);
      expectError(refused, 'INVALID_REFERENCE', 'account_tag');
      expect(refused.body.errors?.[0]?.message).toContain(what);
      expect(await accounts().countDocuments({ account_tag: tag })).toBe(1);
    }
    await c.transactions.updateOne({ _id: 'w-pending-record' }, { $set: { state: 'charged' } });
    // A rerating's intent on one of its records: finished against the account found by tag.
    const intent = { run: 'w-run', at: new Date(), fee_before: 3n, fee_after: 6n, rate: null, segments: null };
    await c.transactions.updateOne({ _id: 'w-pending-record' }, { $set: { rerate: intent } });
    const rerating = await api.gql('mutation { deleteAccount(account_tag: "w-pending") { id } }');
    expectError(rerating, 'INVALID_REFERENCE', 'account_tag');
    expect(rerating.body.errors?.[0]?.message).toContain('rerated');
    await c.transactions.updateOne({ _id: 'w-pending-record' }, { $unset: { rerate: '' } });
    await c.outcomes.updateOne({ _id: 'w-rollback-job' }, { $set: { applied_at: new Date() } });
    await c.importBatches.updateOne({ _id: 'w-import-batch' }, { $unset: { settle_pending: '' }, $set: { settled_by: 'w-settlement' } });
    await c.importBatches.insertOne({ _id: 'w-settlement', members: ['w-import-batch'], settle_pending: true } as never);
    // A settlement that claimed the batch and has not written its debits yet: still under way.
    expectError(await api.gql('mutation { deleteAccount(account_tag: "w-import") { id } }'), 'INVALID_REFERENCE', 'account_tag');
    await c.importBatches.updateOne({ _id: 'w-settlement' }, { $set: { debits_settled: true }, $unset: { settle_pending: '' } });
    for (const tag of ['w-pending', 'w-rollback', 'w-import']) await api.ok(`mutation { deleteAccount(account_tag: "${tag}") { id } }`);
    expect(await accounts().countDocuments({ account_tag: { $in: ['w-pending', 'w-rollback', 'w-import'] } })).toBe(0);
  });

  it('deletes an unused account by id or tag and returns it', async () => {
    const { createAccount } = await api.ok('mutation { createAccount(account_tag: "d-1", name: "Gone", balance: 3) { id } }');
    expect(
      (await api.ok(`mutation { deleteAccount(id: "${createAccount.id}") { id account_tag name balance linked_accounts { id } } }`))
        .deleteAccount,
    ).toEqual({
      id: createAccount.id,
      account_tag: 'd-1',
      name: 'Gone',
      balance: 3,
      linked_accounts: [],
    });
    expectError(await api.gql('mutation { deleteAccount(account_tag: "d-1") { id } }'), 'NOT_FOUND');
  });

  // A deleted account's ledger is closed under its id: an account created with that id again would
  // find its own close already written, and its balance would stay in the tag's ledger for good.
  it('refuses an id that belonged to a deleted account, with DUPLICATE', async () => {
    await api.ok('mutation { createAccount(id: "9b2f3c1e-8a4d-4f6b-9c2a-1d3e5f7a9b01", account_tag: "d-2", balance: 5) { id } }');
    await api.ok('mutation { deleteAccount(id: "9b2f3c1e-8a4d-4f6b-9c2a-1d3e5f7a9b01") { id } }');
    expectError(
      await api.gql('mutation { createAccount(id: "9b2f3c1e-8a4d-4f6b-9c2a-1d3e5f7a9b01", account_tag: "d-2", balance: 7) { id } }'),
      'DUPLICATE',
      'id',
    );
    expect(await accounts().countDocuments({ _id: '9b2f3c1e-8a4d-4f6b-9c2a-1d3e5f7a9b01' })).toBe(0);
    // The tag itself may be used again, under a new id.
    await api.ok('mutation { createAccount(account_tag: "d-2", balance: 7) { id } }');
  });
});
