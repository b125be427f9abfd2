import { ApiHarness, expectError, startApi } from './api-harness';

const FIELDS = 'id pricelist_tag carrier_tag prefix datetime_start datetime_end connect_fee rate rate_increment interval_start description';

describe('API pricelist rates', () => {
  let api: ApiHarness;
  let pricelistId: string;
  let carrierId: string;
  const ratingVersion = async () => Number((await api.ctx.redis.get(`${api.ctx.config.queuePrefix}:rating-data:version`)) ?? 0);

  beforeAll(async () => {
    api = await startApi();
    const data = await api.ok(`mutation {
      p: createPricelist(pricelist_tag: "pl", currency: USD) { id }
      p2: createPricelist(pricelist_tag: "pl2", currency: EUR) { id }
      c: createCarrier(carrier_tag: "cr", host: "h", port: 5060) { id }
      c2: createCarrier(carrier_tag: "cr2", host: "h2", port: 5060) { id }
    }`);
    pricelistId = data.p.id;
    carrierId = data.c.id;
  });

  afterAll(async () => {
    await api.close();
  });

  it('creates by tags with defaults; unset validity bounds are null', async () => {
    const { createPricelistRate } = await api.ok(
      `mutation { createPricelistRate(pricelist_tag: "pl", carrier_tag: "cr", prefix: "1", rate: 20) { ${FIELDS} } }`,
    );
    expect(createPricelistRate).toEqual({
      id: expect.any(String),
      pricelist_tag: 'pl',
      carrier_tag: 'cr',
      prefix: '1',
      datetime_start: null,
      datetime_end: null,
      connect_fee: 0,
      rate: 20,
      rate_increment: 1,
      interval_start: 0,
      description: null,
    });
  });

  it('creates by pricelist_id and carrier_id; datetimes with or without Z are UTC and answer ISO 8601', async () => {
    const { createPricelistRate } =
      await api.ok(`mutation { createPricelistRate(pricelist_id: "${pricelistId}", carrier_id: "${carrierId}", prefix: "44",
      datetime_start: "2024-01-01T00:00:00", datetime_end: "2024-06-30T12:30:00Z", connect_fee: 5, rate: 12, rate_increment: 60,
      interval_start: 2, description: "UK") { ${FIELDS} } }`);
    expect(createPricelistRate).toMatchObject({
      pricelist_tag: 'pl',
      carrier_tag: 'cr',
      prefix: '44',
      datetime_start: '2024-01-01T00:00:00Z',
      datetime_end: '2024-06-30T12:30:00Z',
      connect_fee: 5,
      rate: 12,
      rate_increment: 60,
      interval_start: 2,
      description: 'UK',
    });
    const stored = await api.ctx.mongo.collections.rates.findOne({ _id: createPricelistRate.id });
    expect(stored?.datetime_start).toEqual(new Date(Date.UTC(2024, 0, 1)));
  });

  it('reads by id, or by pricelist, carrier (tag or id) and prefix', async () => {
    const { createPricelistRate: r } = await api.ok(
      `mutation { createPricelistRate(pricelist_tag: "pl", carrier_tag: "cr", prefix: "49", rate: 7) { ${FIELDS} } }`,
    );
    expect((await api.ok(`{ PricelistRate(id: "${r.id}") { ${FIELDS} } }`)).PricelistRate).toEqual(r);
    expect((await api.ok(`{ PricelistRate(pricelist_tag: "pl", carrier_tag: "cr", prefix: "49") { ${FIELDS} } }`)).PricelistRate).toEqual(
      r,
    );
    expect(
      (await api.ok(`{ PricelistRate(pricelist_id: "${pricelistId}", carrier_id: "${carrierId}", prefix: "49") { id } }`)).PricelistRate,
    ).toEqual({ id: r.id });
    expect((await api.ok('{ PricelistRate(pricelist_tag: "pl", carrier_tag: "cr", prefix: "4") { id } }')).PricelistRate).toBeNull();
    expect((await api.ok('{ PricelistRate(pricelist_tag: "nope", carrier_tag: "cr", prefix: "49") { id } }')).PricelistRate).toBeNull();
    expectError(await api.gql('{ PricelistRate(pricelist_tag: "pl", prefix: "49") { id } }'), 'BAD_USER_INPUT', 'id');
  });

  it.each([
    ['a negative rate', 'rate: -1', 'rate'],
    ['a negative connect fee', 'rate: 1, connect_fee: -1', 'connect_fee'],
    ['a negative increment', 'rate: 1, rate_increment: -60', 'rate_increment'],
    ['a negative interval start', 'rate: 1, interval_start: -1', 'interval_start'],
    ['no rate', 'connect_fee: 1', 'rate'],
    ['an end before the start', 'rate: 1, datetime_start: "2024-02-01T00:00:00", datetime_end: "2024-01-01T00:00:00"', 'datetime_end'],
    ['an end equal to the start', 'rate: 1, datetime_start: "2024-02-01T00:00:00", datetime_end: "2024-02-01T00:00:00Z"', 'datetime_end'],
    ['a prefix with a space', 'rate: 1, prefix: "4 4"', 'prefix'],
  ])('refuses %s with BAD_USER_INPUT', async (_what, args, field) => {
    const before = await api.ctx.mongo.collections.rates.countDocuments();
    const withPrefix = args.includes('prefix:') ? args : `${args}, prefix: "77"`;
    expectError(
      await api.gql(`mutation { createPricelistRate(pricelist_tag: "pl", carrier_tag: "cr", ${withPrefix}) { id } }`),
      'BAD_USER_INPUT',
      field,
    );
    expect(await api.ctx.mongo.collections.rates.countDocuments()).toBe(before);
  });

  it('refuses a malformed datetime with BAD_USER_INPUT naming the argument (HTTP 400, literal or variable)', async () => {
    const literal = await api.gql(
      'mutation { createPricelistRate(pricelist_tag: "pl", carrier_tag: "cr", prefix: "78", rate: 1, datetime_start: "2024-13-01T00:00:00") { id } }',
    );
    expect(literal.status).toBe(400);
    expectError(literal, 'BAD_USER_INPUT', 'datetime_start');
    const variable = await api.gql(
      'mutation ($end: DateTime) { createPricelistRate(pricelist_tag: "pl", carrier_tag: "cr", prefix: "78", rate: 1, datetime_end: $end) { id } }',
      { end: '2024-01-01 00:00:00' },
    );
    expect(variable.status).toBe(400);
    expectError(variable, 'BAD_USER_INPUT', 'end');
    expect(await api.ctx.mongo.collections.rates.countDocuments({ prefix: '78' })).toBe(0);
  });

  it('refuses a missing pricelist or carrier with INVALID_REFERENCE', async () => {
    expectError(
      await api.gql('mutation { createPricelistRate(pricelist_tag: "nope", carrier_tag: "cr", prefix: "1", rate: 1) { id } }'),
      'INVALID_REFERENCE',
      'pricelist_tag',
    );
    expectError(
      await api.gql('mutation { createPricelistRate(pricelist_tag: "pl", carrier_tag: "nope", prefix: "1", rate: 1) { id } }'),
      'INVALID_REFERENCE',
      'carrier_tag',
    );
    expectError(
      await api.gql(
        'mutation { createPricelistRate(pricelist_id: "0b0a3c1e-8a4d-4f6b-9c2a-1d3e5f7a9b0c", carrier_tag: "cr", prefix: "1", rate: 1) { id } }',
      ),
      'INVALID_REFERENCE',
      'pricelist_id',
    );
    expectError(
      await api.gql('mutation { createPricelistRate(carrier_tag: "cr", prefix: "1", rate: 1) { id } }'),
      'BAD_USER_INPUT',
      'pricelist_tag',
    );
    expectError(
      await api.gql(
        `mutation { createPricelistRate(pricelist_id: "${pricelistId}", pricelist_tag: "pl2", carrier_tag: "cr", prefix: "1", rate: 1) { id } }`,
      ),
      'BAD_USER_INPUT',
      'pricelist_tag',
    );
  });

  it('refuses a second rate with the same pricelist, carrier and prefix with DUPLICATE', async () => {
    await api.ok('mutation { createPricelistRate(pricelist_tag: "pl2", carrier_tag: "cr", prefix: "33", rate: 1) { id } }');
    const answer = await api.gql('mutation { createPricelistRate(pricelist_tag: "pl2", carrier_tag: "cr", prefix: "33", rate: 2) { id } }');
    expect(expectError(answer, 'DUPLICATE').extensions?.field).toBe('pricelist_tag,carrier_tag,prefix');
  });

  describe('update', () => {
    let id: string;
    beforeAll(async () => {
      id = (
        await api.ok(
          'mutation { createPricelistRate(pricelist_tag: "pl", carrier_tag: "cr", prefix: "61", rate: 10, datetime_start: "2024-01-01T00:00:00", description: "AU") { id } }',
        )
      ).createPricelistRate.id;
    });

    it('by id changes the given fields, including pricelist and carrier by tag or id', async () => {
      const { updatePricelistRate } = await api.ok(
        `mutation { updatePricelistRate(id: "${id}", carrier_tag: "cr2", rate: 11) { ${FIELDS} } }`,
      );
      expect(updatePricelistRate).toMatchObject({
        carrier_tag: 'cr2',
        rate: 11,
        prefix: '61',
        description: 'AU',
        datetime_start: '2024-01-01T00:00:00Z',
      });
      expect(
        (await api.ok(`mutation { updatePricelistRate(id: "${id}", carrier_id: "${carrierId}") { carrier_tag } }`)).updatePricelistRate,
      ).toEqual({ carrier_tag: 'cr' });
    });

    it('by pricelist, carrier and prefix; null clears nullable fields', async () => {
      const { updatePricelistRate } = await api.ok(
        'mutation { updatePricelistRate(pricelist_tag: "pl", carrier_tag: "cr", prefix: "61", description: null, datetime_start: null) { id description datetime_start } }',
      );
      expect(updatePricelistRate).toEqual({ id, description: null, datetime_start: null });
    });

    it('checks the validity window against the stored values, changing nothing when refused', async () => {
      await api.ok(`mutation { updatePricelistRate(id: "${id}", datetime_start: "2024-05-01T00:00:00") { id } }`);
      expectError(
        await api.gql(`mutation { updatePricelistRate(id: "${id}", rate: 99, datetime_end: "2024-04-01T00:00:00") { id } }`),
        'BAD_USER_INPUT',
        'datetime_end',
      );
      expect(await api.ctx.mongo.collections.rates.findOne({ _id: id })).toMatchObject({ rate: 11, datetime_end: null });
    });

    it('refuses null for rate, an unknown carrier, and an unknown rate', async () => {
      expectError(await api.gql(`mutation { updatePricelistRate(id: "${id}", rate: null) { id } }`), 'BAD_USER_INPUT', 'rate');
      expectError(
        await api.gql(`mutation { updatePricelistRate(id: "${id}", carrier_tag: "nope") { id } }`),
        'INVALID_REFERENCE',
        'carrier_tag',
      );
      expectError(await api.gql('mutation { updatePricelistRate(id: "nope", rate: 1) { id } }'), 'NOT_FOUND');
      expectError(
        await api.gql('mutation { updatePricelistRate(pricelist_tag: "pl", carrier_tag: "cr", prefix: "nope", rate: 1) { id } }'),
        'NOT_FOUND',
      );
    });

    it('refuses moving onto an existing key with DUPLICATE', async () => {
      await api.ok('mutation { createPricelistRate(pricelist_tag: "pl", carrier_tag: "cr", prefix: "62", rate: 10) { id } }');
      expectError(await api.gql(`mutation { updatePricelistRate(id: "${id}", prefix: "62") { id } }`), 'DUPLICATE');
    });
  });

  it('deletes by id or by key and returns the deleted rate', async () => {
    const { a, b } = await api.ok(`mutation {
      a: createPricelistRate(pricelist_tag: "pl2", carrier_tag: "cr2", prefix: "81", rate: 1) { id }
      b: createPricelistRate(pricelist_tag: "pl2", carrier_tag: "cr2", prefix: "82", rate: 2) { id }
    }`);
    expect((await api.ok(`mutation { deletePricelistRate(id: "${a.id}") { id prefix rate } }`)).deletePricelistRate).toEqual({
      id: a.id,
      prefix: '81',
      rate: 1,
    });
    expect(
      (await api.ok('mutation { deletePricelistRate(pricelist_tag: "pl2", carrier_tag: "cr2", prefix: "82") { id } }')).deletePricelistRate,
    ).toEqual({ id: b.id });
    expectError(await api.gql(`mutation { deletePricelistRate(id: "${a.id}") { id } }`), 'NOT_FOUND');
  });

  it('announces every write of rating data', async () => {
    const before = await ratingVersion();
    const { createPricelistRate } = await api.ok(
      'mutation { createPricelistRate(pricelist_tag: "pl2", carrier_tag: "cr2", prefix: "90", rate: 1) { id } }',
    );
    await api.ok(`mutation { updatePricelistRate(id: "${createPricelistRate.id}", rate: 2) { id } }`);
    await api.ok(`mutation { deletePricelistRate(id: "${createPricelistRate.id}") { id } }`);
    await api.ok('mutation { updateCarrier(carrier_tag: "cr2", port: 5070) { id } }');
    await api.ok('mutation { updatePricelist(pricelist_tag: "pl2", name: "EU") { id } }');
    expect(await ratingVersion()).toBe(before + 5);
    // A refused write announces nothing.
    await api.gql('mutation { createPricelistRate(pricelist_tag: "nope", carrier_tag: "cr2", prefix: "90", rate: 1) { id } }');
    expect(await ratingVersion()).toBe(before + 5);
  });

  it('lists with filters given as a string or a list, by tag or by id, and counts under both names', async () => {
    const tagsOf = async (filter: string) =>
      (
        await api.ok(`{ allPricelistRates(filter: ${filter}, sortField: "prefix", perPage: 1000) { pricelist_tag carrier_tag prefix } }`)
      ).allPricelistRates.map(
        (r: { pricelist_tag: string; carrier_tag: string; prefix: string }) => `${r.pricelist_tag}/${r.carrier_tag}/${r.prefix}`,
      );
    const all: string[] = await tagsOf('{}');
    expect(await tagsOf('{ pricelist_tag: "pl2" }')).toEqual(all.filter((t) => t.startsWith('pl2/')));
    expect(await tagsOf(`{ pricelist_id: "${pricelistId}" }`)).toEqual(all.filter((t) => t.startsWith('pl/')));
    expect(await tagsOf(`{ pricelist_id: ["${pricelistId}"], carrier_id: "${carrierId}", prefix: ["44", "49"] }`)).toEqual([
      'pl/cr/44',
      'pl/cr/49',
    ]);
    expect(await tagsOf('{ carrier_tag: ["cr2"], pricelist_tag: ["pl", "pl2"] }')).toEqual(all.filter((t) => t.includes('/cr2/')));
    expect(await tagsOf('{ pricelist_id: "0b0a3c1e-8a4d-4f6b-9c2a-1d3e5f7a9b0c" }')).toEqual([]);
    const counts = await api.ok(`{
      a: _allPricelistRatesMeta(filter: { pricelist_tag: "pl" }) { count }
      b: _allPricelistRates(filter: { pricelist_tag: "pl" }) { count }
    }`);
    expect(counts.a.count).toBe(all.filter((t) => t.startsWith('pl/')).length);
    expect(counts.b).toEqual(counts.a);
  });
});
