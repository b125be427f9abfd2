import buildGraphQLProvider from 'ra-data-graphql-simple';
import type { DataProvider, Identifier, RaRecord } from 'ra-core';
import { ApiHarness, startApi } from './api-harness';

/**
 * The API follows the ra-data-graphql-simple conventions (docs/DESIGN.md section 9): the real data
 * provider introspects the running API and drives every resource through getList, getOne,
 * getMany, getManyReference, create, update and delete, as a react-admin app would.
 */
describe('react-admin compatibility (ra-data-graphql-simple)', () => {
  let api: ApiHarness;
  let dp: DataProvider;
  const created: Record<string, RaRecord> = {};

  beforeAll(async () => {
    api = await startApi();
    dp = buildGraphQLProvider({ clientOptions: { uri: `${api.url}/graphql` } });
    // Apollo's cache warns (client side) when a saved record's list field changes shape; a browser
    // app prints the same. Keep the test output to real problems.
    const warn = console.warn.bind(console);
    jest.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
      if (typeof args[0] === 'string' && args[0].includes('go.apollo.dev/c/err')) return;
      warn(...args);
    });
  });

  afterAll(async () => {
    jest.restoreAllMocks();
    await api.close();
  });

  /** Reads the record back the way an edit form loads it, then saves it with changes. */
  async function saveWithChanges(resource: string, id: Identifier, changes: Record<string, unknown>): Promise<RaRecord> {
    const { data: previousData } = await dp.getOne(resource, { id });
    const { data } = await dp.update(resource, { id, data: { ...previousData, ...changes }, previousData });
    return data;
  }

  it('introspects the eight resources (Import: the uploads of the console, read-only; Holiday: the calendar of rate timings; Rerating: the runs)', async () => {
    const introspection = await (
      dp as DataProvider & { getIntrospection(): Promise<{ resources: Array<{ type: { name: string } }> }> }
    ).getIntrospection();
    expect(introspection.resources.map((r) => r.type.name).sort()).toEqual([
      'Account',
      'Carrier',
      'Holiday',
      'Import',
      'Pricelist',
      'PricelistRate',
      'Rerating',
      'Transaction',
    ]);
  });

  it('create', async () => {
    created.Carrier = (
      await dp.create('Carrier', { data: { carrier_tag: 'ra-carrier', host: 'gw.example', port: 5060, protocol: 'UDP', active: true } })
    ).data;
    created.Carrier2 = (
      await dp.create('Carrier', { data: { carrier_tag: 'ra-carrier-2', host: 'gw2.example', port: 5061, protocol: 'TCP', active: true } })
    ).data;
    created.Pricelist = (await dp.create('Pricelist', { data: { pricelist_tag: 'ra-pricelist', name: 'RA', currency: 'EUR' } })).data;
    created.PricelistRate = (
      await dp.create('PricelistRate', {
        data: {
          pricelist_tag: 'ra-pricelist',
          carrier_tag: 'ra-carrier',
          prefix: '44',
          rate: 20,
          rate_increment: 60,
          datetime_start: new Date('2024-01-01T00:00:00Z'),
        },
      })
    ).data;
    created.Parent = (
      await dp.create('Account', { data: { account_tag: 'ra-parent', type: 'POSTPAID', balance: 0, customer_tag: 'ra' } })
    ).data;
    created.Account = (
      await dp.create('Account', {
        data: {
          account_tag: 'ra-account',
          type: 'PREPAID',
          balance: 500,
          customer_tag: 'ra',
          pricelist_tags: ['ra-pricelist'],
          linked_accountsIds: [created.Parent.id],
        },
      })
    ).data;
    created.Transaction = (
      await dp.create('Transaction', {
        data: {
          transaction_tag: 'ra-call',
          account_tag: 'ra-account',
          source: '100',
          destination: '4420',
          destination_rate: {
            pricelist_tag: 'ra-pricelist',
            carrier_tag: 'ra-carrier',
            prefix: '44',
            connect_fee: 0,
            rate: 20,
            rate_increment: 60,
            interval_start: 0,
          },
          timestamp_begin: '2024-03-01T10:00:00',
          timestamp_end: '2024-03-01T10:00:38',
          duration: 38,
          fee: 20,
        },
      })
    ).data;

    expect(created.Carrier).toMatchObject({ id: expect.any(String), carrier_tag: 'ra-carrier', port: 5060, active: true });
    expect(created.Pricelist).toMatchObject({ pricelist_tag: 'ra-pricelist', currency: 'EUR' });
    expect(created.PricelistRate).toMatchObject({ prefix: '44', rate: 20, datetime_start: '2024-01-01T00:00:00Z' });
    expect(created.Account).toMatchObject({ account_tag: 'ra-account', balance: 500, linked_accountsIds: [created.Parent.id] });
    expect(created.Transaction).toMatchObject({ transaction_tag: 'ra-call', fee: 20, 'account.id': created.Account.id });
  });

  it.each([
    ['Carrier', 'Carrier'],
    ['Pricelist', 'Pricelist'],
    ['PricelistRate', 'PricelistRate'],
    ['Account', 'Account'],
    ['Transaction', 'Transaction'],
  ])('getOne %s', async (resource, key) => {
    const { data } = await dp.getOne(resource, { id: created[key].id });
    expect(data).toEqual(created[key]);
  });

  it('getList pages, sorts and filters', async () => {
    const carriers = await dp.getList('Carrier', {
      pagination: { page: 1, perPage: 1 },
      sort: { field: 'carrier_tag', order: 'DESC' },
      filter: {},
    });
    expect(carriers.total).toBe(2);
    expect(carriers.data.map((c) => c.carrier_tag)).toEqual(['ra-carrier-2']);
    const page2 = await dp.getList('Carrier', {
      pagination: { page: 2, perPage: 1 },
      sort: { field: 'carrier_tag', order: 'DESC' },
      filter: {},
    });
    expect(page2.data.map((c) => c.carrier_tag)).toEqual(['ra-carrier']);

    const pricelists = await dp.getList('Pricelist', {
      pagination: { page: 1, perPage: 10 },
      sort: { field: 'id', order: 'ASC' },
      filter: { currency: 'EUR' },
    });
    expect(pricelists).toEqual({ data: [created.Pricelist], total: 1 });

    const rates = await dp.getList('PricelistRate', {
      pagination: { page: 1, perPage: 10 },
      sort: { field: 'prefix', order: 'ASC' },
      filter: { pricelist_tag: 'ra-pricelist' },
    });
    expect(rates).toEqual({ data: [created.PricelistRate], total: 1 });

    const accounts = await dp.getList('Account', {
      pagination: { page: 1, perPage: 10 },
      sort: { field: 'balance', order: 'DESC' },
      filter: { customer_tag: 'ra' },
    });
    expect(accounts.data.map((a) => a.account_tag)).toEqual(['ra-account', 'ra-parent']);
    expect(accounts.total).toBe(2);

    const transactions = await dp.getList('Transaction', {
      pagination: { page: 1, perPage: 10 },
      sort: { field: 'timestamp_begin', order: 'DESC' },
      filter: { account_tag: 'ra-account', timestamp_begin_gte: '2024-03-01T00:00:00' },
    });
    expect(transactions).toEqual({ data: [created.Transaction], total: 1 });
  });

  it.each([
    ['Carrier', ['Carrier', 'Carrier2']],
    ['Pricelist', ['Pricelist']],
    ['PricelistRate', ['PricelistRate']],
    ['Account', ['Account', 'Parent']],
    ['Transaction', ['Transaction']],
  ])('getMany %s', async (resource, keys) => {
    const { data } = await dp.getMany(resource, { ids: keys.map((k) => created[k].id) });
    expect(data.map((r) => r.id).sort()).toEqual(keys.map((k) => created[k].id).sort());
  });

  it('getManyReference', async () => {
    const page = { pagination: { page: 1, perPage: 25 }, sort: { field: 'id', order: 'ASC' as const }, filter: {} };
    const rates = await dp.getManyReference('PricelistRate', { ...page, target: 'pricelist_id', id: created.Pricelist.id });
    expect(rates).toEqual({ data: [created.PricelistRate], total: 1 });
    const ratesByCarrier = await dp.getManyReference('PricelistRate', { ...page, target: 'carrier_id', id: created.Carrier2.id });
    expect(ratesByCarrier).toEqual({ data: [], total: 0 });
    const calls = await dp.getManyReference('Transaction', { ...page, target: 'account_tag', id: 'ra-account' });
    expect(calls).toEqual({ data: [created.Transaction], total: 1 });
    const customers = await dp.getManyReference('Account', { ...page, target: 'customer_tag', id: 'ra' });
    expect(customers.total).toBe(2);
    const udp = await dp.getManyReference('Carrier', { ...page, target: 'protocol', id: 'TCP' });
    expect(udp.data.map((c) => c.carrier_tag)).toEqual(['ra-carrier-2']);
    const eur = await dp.getManyReference('Pricelist', { ...page, target: 'currency', id: 'EUR' });
    expect(eur.total).toBe(1);
  });

  it('update saves whole records as an edit form sends them', async () => {
    expect(await saveWithChanges('Carrier', created.Carrier.id, { port: 5080 })).toMatchObject({
      id: created.Carrier.id,
      port: 5080,
      carrier_tag: 'ra-carrier',
    });
    expect(await saveWithChanges('Pricelist', created.Pricelist.id, { name: 'Renamed' })).toMatchObject({
      name: 'Renamed',
      pricelist_tag: 'ra-pricelist',
    });
    expect(await saveWithChanges('PricelistRate', created.PricelistRate.id, { rate: 25, carrier_tag: 'ra-carrier-2' })).toMatchObject({
      rate: 25,
      carrier_tag: 'ra-carrier-2',
      datetime_start: '2024-01-01T00:00:00Z',
    });
    const account = await saveWithChanges('Account', created.Account.id, { name: 'Edited', balance: 450 });
    expect(account).toMatchObject({ name: 'Edited', balance: 450, linked_accountsIds: [created.Parent.id] });
    // A reference array input edits linked_accountsIds.
    expect(await saveWithChanges('Account', created.Account.id, { linked_accountsIds: [] })).toMatchObject({ linked_accounts: [] });
    expect(await saveWithChanges('Transaction', created.Transaction.id, { fee: 21, failed: true })).toMatchObject({
      fee: 21,
      failed: true,
      destination_rate: expect.objectContaining({ rate: 20 }),
    });
    const { data } = await dp.getOne('Transaction', { id: created.Transaction.id });
    expect(data).toMatchObject({ fee: 21, duration: 38, timestamp_begin: '2024-03-01T10:00:00Z' });
  });

  it('update reports refusals as errors', async () => {
    await expect(dp.update('Carrier', { id: created.Carrier.id, data: { port: 0 }, previousData: created.Carrier })).rejects.toThrow(
      /port/,
    );
  });

  it('delete, in dependency order, returning the deleted records', async () => {
    for (const key of ['Transaction', 'Account', 'Parent', 'PricelistRate', 'Pricelist', 'Carrier', 'Carrier2']) {
      const resource = key === 'Parent' ? 'Account' : key === 'Carrier2' ? 'Carrier' : key;
      const { data } = await dp.delete(resource, { id: created[key].id, previousData: created[key] });
      expect(data.id).toBe(created[key].id);
    }
    const left = await Promise.all(
      ['Carrier', 'Pricelist', 'PricelistRate', 'Account', 'Transaction'].map(
        async (resource) =>
          (await dp.getList(resource, { pagination: { page: 1, perPage: 10 }, sort: { field: 'id', order: 'ASC' }, filter: {} })).total,
      ),
    );
    expect(left).toEqual([0, 0, 0, 0, 0]);
  });
});
