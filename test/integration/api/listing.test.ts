import { ApiHarness, expectError, startApi } from './api-harness';

describe('API listing: paging and sorting', () => {
  let api: ApiHarness;
  let ids: string[];

  beforeAll(async () => {
    api = await startApi();
    const mutations = Array.from(
      { length: 30 },
      (_, i) => `c${i}: createCarrier(carrier_tag: "c-${String(i).padStart(2, '0')}", host: "h", port: ${1000 + (i % 5)}) { id }`,
    );
    const created = await api.ok(`mutation { ${mutations.join('\n')} }`);
    ids = Object.values(created as Record<string, { id: string }>)
      .map((c) => c.id)
      .sort();
  });

  afterAll(async () => {
    await api.close();
  });

  const listIds = async (args: string) => (await api.ok(`{ allCarriers${args} { id } }`)).allCarriers.map((c: { id: string }) => c.id);

  it('defaults to page 0, 25 per page, sorted by id ascending', async () => {
    expect(await listIds('')).toEqual(ids.slice(0, 25));
  });

  it('pages from 0 with perPage up to 1000', async () => {
    expect(await listIds('(page: 0, perPage: 10)')).toEqual(ids.slice(0, 10));
    expect(await listIds('(page: 2, perPage: 10)')).toEqual(ids.slice(20, 30));
    expect(await listIds('(page: 3, perPage: 10)')).toEqual([]);
    expect(await listIds('(perPage: 1000)')).toEqual(ids);
  });

  it('sorts on a field in either order (any case), ties broken by id', async () => {
    const { allCarriers } = await api.ok('{ allCarriers(sortField: "port", sortOrder: "DESC", perPage: 30) { id port } }');
    const expected = [...allCarriers].sort(
      (a: { id: string; port: number }, b: { id: string; port: number }) => b.port - a.port || (a.id < b.id ? 1 : -1),
    );
    expect(allCarriers).toEqual(expected);
    expect(await listIds('(sortOrder: "desc", perPage: 5)')).toEqual([...ids].reverse().slice(0, 5));
    const tags = (await api.ok('{ allCarriers(sortField: "carrier_tag", sortOrder: "asc", perPage: 3, page: 1) { carrier_tag } }'))
      .allCarriers;
    expect(tags).toEqual([{ carrier_tag: 'c-03' }, { carrier_tag: 'c-04' }, { carrier_tag: 'c-05' }]);
  });

  it('counts every match regardless of paging', async () => {
    expect((await api.ok('{ _allCarriersMeta(page: 3, perPage: 1, sortField: "port") { count } }'))._allCarriersMeta).toEqual({
      count: 30,
    });
  });

  it.each(['allCarriers', 'allPricelists', 'allPricelistRates', 'allAccounts', 'allTransactions'])(
    '%s refuses bad paging and sorting with BAD_USER_INPUT',
    async (query) => {
      expectError(await api.gql(`{ ${query}(perPage: 0) { id } }`), 'BAD_USER_INPUT', 'perPage');
      expectError(await api.gql(`{ ${query}(perPage: 1001) { id } }`), 'BAD_USER_INPUT', 'perPage');
      expectError(await api.gql(`{ ${query}(page: -1) { id } }`), 'BAD_USER_INPUT', 'page');
      expectError(await api.gql(`{ ${query}(sortField: "password") { id } }`), 'BAD_USER_INPUT', 'sortField');
      expectError(await api.gql(`{ ${query}(sortOrder: "up") { id } }`), 'BAD_USER_INPUT', 'sortOrder');
      expect((await api.gql(`{ ${query}(page: 0, perPage: 1000, sortField: "id", sortOrder: "ASC") { id } }`)).body.errors).toBeUndefined();
    },
  );

  it('filters every resource on id and ids', async () => {
    const made = await api.ok(`mutation {
      Pricelist: createPricelist(pricelist_tag: "ids-pl", currency: USD) { id }
      Account: createAccount(account_tag: "ids-acc") { id }
    }`);
    const more = await api.ok(`mutation {
      PricelistRate: createPricelistRate(pricelist_tag: "ids-pl", carrier_tag: "c-00", prefix: "1", rate: 1) { id }
      Transaction: createTransaction(account_tag: "ids-acc", transaction_tag: "ids-t") { id }
    }`);
    const ofResource: Record<string, string> = {
      Carrier: ids[0],
      ...Object.fromEntries(Object.entries({ ...made, ...more }).map(([k, v]) => [k, (v as { id: string }).id])),
    };
    for (const [resource, id] of Object.entries(ofResource)) {
      const plural = `all${resource}s`;
      const byId = await api.ok(
        `{ list: ${plural}(filter: { id: "${id}" }) { id } meta: _${plural}Meta(filter: { id: "${id}" }) { count } }`,
      );
      expect({ resource, ...byId }).toEqual({ resource, list: [{ id }], meta: { count: 1 } });
      const byIds = await api.ok(
        `{ list: ${plural}(filter: { ids: ["${id}", "missing"] }) { id } none: ${plural}(filter: { ids: [] }) { id } }`,
      );
      expect({ resource, ...byIds }).toEqual({ resource, list: [{ id }], none: [] });
    }
  });
});
