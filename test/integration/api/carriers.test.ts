import { ApiHarness, expectError, startApi } from './api-harness';

const FIELDS = 'id carrier_tag host port protocol active';

describe('API carriers', () => {
  let api: ApiHarness;

  beforeAll(async () => {
    api = await startApi();
  });

  afterAll(async () => {
    await api.close();
  });

  const create = (args: string) => api.gql(`mutation { createCarrier(${args}) { ${FIELDS} } }`);

  it('creates a carrier with defaults (uuid4 id, UDP, active) and reads it by id and by tag', async () => {
    const { createCarrier: created } = await api.ok(
      `mutation { createCarrier(carrier_tag: "c-defaults", host: "10.0.0.1", port: 5060) { ${FIELDS} } }`,
    );
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      carrier_tag: 'c-defaults',
      host: '10.0.0.1',
      port: 5060,
      protocol: 'UDP',
      active: true,
    });
    expect((await api.ok(`{ Carrier(id: "${created.id}") { ${FIELDS} } }`)).Carrier).toEqual(created);
    expect((await api.ok(`{ Carrier(carrier_tag: "c-defaults") { ${FIELDS} } }`)).Carrier).toEqual(created);
    const stored = await api.ctx.mongo.collections.carriers.findOne({ _id: created.id });
    expect(stored).toMatchObject({ carrier_tag: 'c-defaults', port: 5060 });
  });

  it('keeps a given id and every given field', async () => {
    const id = '5b0a3c1e-8a4d-4f6b-9c2a-1d3e5f7a9b0c';
    const answer = await create(`id: "${id}", carrier_tag: "c-given", host: "sip.example.net", port: 5061, protocol: TCP, active: false`);
    expect(answer.body.data?.createCarrier).toEqual({
      id,
      carrier_tag: 'c-given',
      host: 'sip.example.net',
      port: 5061,
      protocol: 'TCP',
      active: false,
    });
  });

  it('answers null for an unknown carrier and for a tag that does not match the id', async () => {
    expect((await api.ok('{ Carrier(id: "nope") { id } }')).Carrier).toBeNull();
    const { createCarrier } = await api.ok('mutation { createCarrier(carrier_tag: "c-mismatch", host: "h", port: 1) { id } }');
    expect((await api.ok(`{ Carrier(id: "${createCarrier.id}", carrier_tag: "other") { id } }`)).Carrier).toBeNull();
    expectError(await api.gql('{ Carrier { id } }'), 'BAD_USER_INPUT', 'id');
  });

  it.each([
    ['port 0', 'carrier_tag: "v1", host: "h", port: 0', 'port'],
    ['port 65536', 'carrier_tag: "v1", host: "h", port: 65536', 'port'],
    ['a blank tag', 'carrier_tag: "  ", host: "h", port: 5060', 'carrier_tag'],
    ['an empty tag', 'carrier_tag: "", host: "h", port: 5060', 'carrier_tag'],
    ['a tag with surrounding spaces', 'carrier_tag: " v1", host: "h", port: 5060', 'carrier_tag'],
    ['a 129-character tag', `carrier_tag: "${'x'.repeat(129)}", host: "h", port: 5060`, 'carrier_tag'],
    ['a bad host', 'carrier_tag: "v1", host: "not a host", port: 5060', 'host'],
    ['a missing host', 'carrier_tag: "v1", port: 5060', 'host'],
    ['a missing tag', 'host: "h", port: 5060', 'carrier_tag'],
    ['a bad id', 'id: "123", carrier_tag: "v1", host: "h", port: 5060', 'id'],
  ])('refuses %s with BAD_USER_INPUT naming the field, storing nothing', async (_what, args, field) => {
    const before = await api.ctx.mongo.collections.carriers.countDocuments();
    expectError(await create(args), 'BAD_USER_INPUT', field);
    expect(await api.ctx.mongo.collections.carriers.countDocuments()).toBe(before);
  });

  it('accepts IPv6 addresses and hostnames', async () => {
    expect((await create('carrier_tag: "c-v6", host: "2001:db8::1", port: 5060')).body.errors).toBeUndefined();
    expect((await create('carrier_tag: "c-name", host: "gw-1.example.com", port: 5060')).body.errors).toBeUndefined();
  });

  it('refuses a duplicate tag or id with DUPLICATE', async () => {
    const { createCarrier } = await api.ok('mutation { createCarrier(carrier_tag: "c-dup", host: "h", port: 1) { id } }');
    expectError(await create('carrier_tag: "c-dup", host: "h2", port: 2'), 'DUPLICATE', 'carrier_tag');
    expectError(await create(`id: "${createCarrier.id}", carrier_tag: "c-dup2", host: "h2", port: 2`), 'DUPLICATE', 'id');
    expect(await api.ctx.mongo.collections.carriers.countDocuments({ host: 'h2' })).toBe(0);
  });

  describe('update', () => {
    let id: string;
    beforeAll(async () => {
      id = (await api.ok('mutation { createCarrier(carrier_tag: "c-upd", host: "h", port: 5060, protocol: UDP) { id } }')).createCarrier.id;
    });

    it('by id changes only the given fields and may rename', async () => {
      const { updateCarrier } = await api.ok(`mutation { updateCarrier(id: "${id}", carrier_tag: "c-upd2", port: 5070) { ${FIELDS} } }`);
      expect(updateCarrier).toEqual({ id, carrier_tag: 'c-upd2', host: 'h', port: 5070, protocol: 'UDP', active: true });
    });

    it('by tag changes the given fields without renaming', async () => {
      const { updateCarrier } = await api.ok(
        `mutation { updateCarrier(carrier_tag: "c-upd2", active: false, protocol: TCP) { ${FIELDS} } }`,
      );
      expect(updateCarrier).toEqual({ id, carrier_tag: 'c-upd2', host: 'h', port: 5070, protocol: 'TCP', active: false });
    });

    it('refuses null for a required field and invalid values, changing nothing', async () => {
      expectError(await api.gql(`mutation { updateCarrier(id: "${id}", host: null) { id } }`), 'BAD_USER_INPUT', 'host');
      expectError(await api.gql(`mutation { updateCarrier(id: "${id}", active: true, port: -1) { id } }`), 'BAD_USER_INPUT', 'port');
      expect(await api.ctx.mongo.collections.carriers.findOne({ _id: id })).toMatchObject({ active: false, port: 5070 });
    });

    it('answers NOT_FOUND for an unknown carrier and BAD_USER_INPUT without id or tag', async () => {
      expectError(await api.gql('mutation { updateCarrier(id: "nope", port: 1) { id } }'), 'NOT_FOUND');
      expectError(await api.gql('mutation { updateCarrier(carrier_tag: "nope", port: 1) { id } }'), 'NOT_FOUND');
      expectError(await api.gql('mutation { updateCarrier(port: 1) { id } }'), 'BAD_USER_INPUT', 'id');
    });

    it('refuses a rename onto an existing tag with DUPLICATE', async () => {
      await api.ok('mutation { createCarrier(carrier_tag: "c-taken", host: "h", port: 1) { id } }');
      expectError(await api.gql(`mutation { updateCarrier(id: "${id}", carrier_tag: "c-taken") { id } }`), 'DUPLICATE', 'carrier_tag');
    });
  });

  describe('references', () => {
    beforeAll(async () => {
      await api.ok(`mutation {
        c1: createCarrier(carrier_tag: "c-used-by-rate", host: "h", port: 1) { id }
        c2: createCarrier(carrier_tag: "c-used-by-account", host: "h", port: 1) { id }
        c3: createCarrier(carrier_tag: "c-forced-by-account", host: "h", port: 1) { id }
        p: createPricelist(pricelist_tag: "p-refs", currency: USD) { id }
      }`);
      await api.ok(`mutation {
        r: createPricelistRate(pricelist_tag: "p-refs", carrier_tag: "c-used-by-rate", prefix: "1", rate: 1) { id }
        a: createAccount(account_tag: "a-refs", carrier_tags: ["c-used-by-account"], carrier_tags_override: ["c-forced-by-account"]) { id }
      }`);
    });

    it.each(['c-used-by-rate', 'c-used-by-account', 'c-forced-by-account'])(
      'refuses to delete or rename %s while it is used',
      async (tag) => {
        expectError(await api.gql(`mutation { deleteCarrier(carrier_tag: "${tag}") { id } }`), 'INVALID_REFERENCE', 'carrier_tag');
        const { Carrier } = await api.ok(`{ Carrier(carrier_tag: "${tag}") { id } }`);
        expectError(
          await api.gql(`mutation { updateCarrier(id: "${Carrier.id}", carrier_tag: "renamed", port: 2) { id } }`),
          'INVALID_REFERENCE',
          'carrier_tag',
        );
        expect(await api.ctx.mongo.collections.carriers.findOne({ _id: Carrier.id })).toMatchObject({ carrier_tag: tag, port: 1 });
        // Changing anything but the tag is fine.
        expect((await api.ok(`mutation { updateCarrier(carrier_tag: "${tag}", port: 3) { port } }`)).updateCarrier.port).toBe(3);
      },
    );

    it('deletes a carrier once nothing uses it and returns the deleted fields', async () => {
      await api.ok('mutation { deletePricelistRate(pricelist_tag: "p-refs", carrier_tag: "c-used-by-rate", prefix: "1") { id } }');
      const { Carrier } = await api.ok('{ Carrier(carrier_tag: "c-used-by-rate") { id carrier_tag host port protocol active } }');
      const { deleteCarrier } = await api.ok(
        `mutation { deleteCarrier(id: "${Carrier.id}") { id carrier_tag host port protocol active } }`,
      );
      expect(deleteCarrier).toEqual(Carrier);
      expect((await api.ok(`{ Carrier(id: "${Carrier.id}") { id } }`)).Carrier).toBeNull();
      expectError(await api.gql(`mutation { deleteCarrier(id: "${Carrier.id}") { id } }`), 'NOT_FOUND');
    });
  });

  it('lists with filters: ids, carrier_tag as a string or a list, protocol, active, host', async () => {
    const { a, b, c } = await api.ok(`mutation {
      a: createCarrier(carrier_tag: "f-a", host: "f.example", port: 1, protocol: TCP) { id }
      b: createCarrier(carrier_tag: "f-b", host: "f.example", port: 2, active: false) { id }
      c: createCarrier(carrier_tag: "f-c", host: "g.example", port: 3) { id }
    }`);
    const tags = async (filter: string) =>
      (await api.ok(`{ allCarriers(filter: ${filter}, sortField: "carrier_tag") { carrier_tag } }`)).allCarriers.map(
        (x: { carrier_tag: string }) => x.carrier_tag,
      );
    expect(await tags(`{ ids: ["${a.id}", "${c.id}"] }`)).toEqual(['f-a', 'f-c']);
    expect(await tags(`{ id: "${b.id}" }`)).toEqual(['f-b']);
    expect(await tags('{ carrier_tag: "f-b" }')).toEqual(['f-b']);
    expect(await tags('{ carrier_tag: ["f-a", "f-c", "nope"] }')).toEqual(['f-a', 'f-c']);
    expect(await tags('{ host: "f.example", protocol: UDP }')).toEqual(['f-b']);
    expect(await tags('{ host: "f.example", active: true }')).toEqual(['f-a']);
    expect(await tags('{ ids: [] }')).toEqual([]);
    expect((await api.ok('{ _allCarriersMeta(filter: { host: "f.example" }) { count } }'))._allCarriersMeta).toEqual({ count: 2 });
  });
});
