import { ApiHarness, expectError, startApi } from './api-harness';

const FIELDS = 'id pricelist_tag name currency';

describe('API pricelists', () => {
  let api: ApiHarness;

  beforeAll(async () => {
    api = await startApi();
  });

  afterAll(async () => {
    await api.close();
  });

  it('creates with pricelist_tag or with its alias tag, name optional', async () => {
    const { a, b } = await api.ok(`mutation {
      a: createPricelist(pricelist_tag: "pl-a", name: "Retail", currency: USD) { ${FIELDS} }
      b: createPricelist(tag: "pl-b", currency: EUR) { ${FIELDS} }
    }`);
    expect(a).toEqual({ id: expect.any(String), pricelist_tag: 'pl-a', name: 'Retail', currency: 'USD' });
    expect(b).toEqual({ id: expect.any(String), pricelist_tag: 'pl-b', name: null, currency: 'EUR' });
    expect((await api.ok(`{ Pricelist(id: "${a.id}") { ${FIELDS} } }`)).Pricelist).toEqual(a);
    expect((await api.ok(`{ Pricelist(pricelist_tag: "pl-b") { ${FIELDS} } }`)).Pricelist).toEqual(b);
    expect((await api.ok(`{ Pricelist(tag: "pl-b") { ${FIELDS} } }`)).Pricelist).toEqual(b);
  });

  it('accepts tag and pricelist_tag together only when equal', async () => {
    expect(
      (await api.ok('mutation { createPricelist(tag: "pl-same", pricelist_tag: "pl-same", currency: USD) { pricelist_tag } }'))
        .createPricelist,
    ).toEqual({
      pricelist_tag: 'pl-same',
    });
    expectError(
      await api.gql('mutation { createPricelist(tag: "pl-x", pricelist_tag: "pl-y", currency: USD) { id } }'),
      'BAD_USER_INPUT',
      'tag',
    );
  });

  it.each([
    ['no tag', 'currency: USD', 'pricelist_tag'],
    ['no currency', 'pricelist_tag: "pl-nc"', 'currency'],
    ['a name over 256 characters', `pricelist_tag: "pl-long", currency: USD, name: "${'n'.repeat(257)}"`, 'name'],
  ])('refuses %s with BAD_USER_INPUT', async (_what, args, field) => {
    expectError(await api.gql(`mutation { createPricelist(${args}) { id } }`), 'BAD_USER_INPUT', field);
  });

  it('refuses an unknown currency as a GraphQL validation error (HTTP 400)', async () => {
    const answer = await api.gql('mutation { createPricelist(pricelist_tag: "pl-gbp", currency: GBP) { id } }');
    expect(answer.status).toBe(400);
    expect(answer.body.errors?.[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('refuses a duplicate tag with DUPLICATE', async () => {
    await api.ok('mutation { createPricelist(pricelist_tag: "pl-dup", currency: USD) { id } }');
    expectError(await api.gql('mutation { createPricelist(tag: "pl-dup", currency: EUR) { id } }'), 'DUPLICATE', 'pricelist_tag');
  });

  it('updates by id (renaming with tag or pricelist_tag) or by tag; null clears the name', async () => {
    const { createPricelist: p } = await api.ok('mutation { createPricelist(pricelist_tag: "pl-u", name: "N", currency: USD) { id } }');
    expect((await api.ok(`mutation { updatePricelist(id: "${p.id}", tag: "pl-u2") { ${FIELDS} } }`)).updatePricelist).toEqual({
      id: p.id,
      pricelist_tag: 'pl-u2',
      name: 'N',
      currency: 'USD',
    });
    expect(
      (await api.ok('mutation { updatePricelist(tag: "pl-u2", name: null, currency: EUR) { name currency } }')).updatePricelist,
    ).toEqual({
      name: null,
      currency: 'EUR',
    });
    expectError(await api.gql(`mutation { updatePricelist(id: "${p.id}", currency: null) { id } }`), 'BAD_USER_INPUT', 'currency');
    expectError(await api.gql('mutation { updatePricelist(pricelist_tag: "pl-none", name: "x") { id } }'), 'NOT_FOUND');
  });

  describe('references', () => {
    beforeAll(async () => {
      await api.ok(`mutation {
        p1: createPricelist(pricelist_tag: "pl-rated", currency: USD) { id }
        p2: createPricelist(pricelist_tag: "pl-assigned", currency: USD) { id }
        c: createCarrier(carrier_tag: "pl-carrier", host: "h", port: 1) { id }
      }`);
      await api.ok(`mutation {
        r: createPricelistRate(pricelist_tag: "pl-rated", carrier_tag: "pl-carrier", prefix: "44", rate: 3) { id }
        a: createAccount(account_tag: "pl-account", pricelist_tags: ["pl-assigned"]) { id }
      }`);
    });

    it.each(['pl-rated', 'pl-assigned'])('refuses to delete or rename %s while it is used, changing nothing', async (tag) => {
      expectError(await api.gql(`mutation { deletePricelist(pricelist_tag: "${tag}") { id } }`), 'INVALID_REFERENCE', 'pricelist_tag');
      const { Pricelist } = await api.ok(`{ Pricelist(pricelist_tag: "${tag}") { id } }`);
      expectError(
        await api.gql(`mutation { updatePricelist(id: "${Pricelist.id}", pricelist_tag: "moved", name: "x") { id } }`),
        'INVALID_REFERENCE',
        'pricelist_tag',
      );
      expect(await api.ctx.mongo.collections.pricelists.findOne({ _id: Pricelist.id })).toMatchObject({ pricelist_tag: tag, name: null });
    });

    it('deletes once unused and returns the deleted record', async () => {
      await api.ok('mutation { updateAccount(account_tag: "pl-account", pricelist_tags: null) { id } }');
      const { deletePricelist } = await api.ok(`mutation { deletePricelist(tag: "pl-assigned") { ${FIELDS} } }`);
      expect(deletePricelist).toMatchObject({ pricelist_tag: 'pl-assigned', currency: 'USD' });
      expect((await api.ok('{ Pricelist(tag: "pl-assigned") { id } }')).Pricelist).toBeNull();
    });
  });

  it('lists with filters and counts', async () => {
    await api.ok(`mutation {
      a: createPricelist(pricelist_tag: "lf-a", currency: USD) { id }
      b: createPricelist(pricelist_tag: "lf-b", currency: EUR) { id }
    }`);
    const { list, meta } = await api.ok(`{
      list: allPricelists(filter: { pricelist_tag: ["lf-a", "lf-b"], currency: EUR }) { pricelist_tag }
      meta: _allPricelistsMeta(filter: { pricelist_tag: ["lf-a", "lf-b"] }) { count }
    }`);
    expect(list).toEqual([{ pricelist_tag: 'lf-b' }]);
    expect(meta).toEqual({ count: 2 });
  });
});
