import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../../src/api/app';
import { createTestContext, graphql, type TestContext } from '../../support/harness';

/** POST /v1/rate-decks on the management API (registered by buildApi), plus the GraphQL fields it feeds. */
describe('rate decks over HTTP', () => {
  let ctx: TestContext;
  let app: FastifyInstance;
  let url: string;

  const post = async (query: string, body: string, contentType = 'text/csv') => {
    const response = await fetch(`${url}/v1/rate-decks?${query}`, { method: 'POST', headers: { 'content-type': contentType }, body });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const ok = async (query: string) => {
    const answer = await graphql(url, query);
    if (answer.body.errors) throw new Error(JSON.stringify(answer.body.errors));
    return answer.body.data as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  };

  beforeAll(async () => {
    ctx = await createTestContext();
    app = await buildApi(ctx);
    url = await app.listen({ host: '127.0.0.1', port: 0 });
    await ok(`mutation {
      p: createPricelist(pricelist_tag: "retail", currency: USD) { id }
      c: createCarrier(carrier_tag: "acme", host: "10.0.0.1", port: 5060) { id }
      a: createAccount(account_tag: "alice", pricelist_tags: ["retail"]) { id }
    }`);
    await ok(
      'mutation { createPricelistRate(pricelist_tag: "retail", carrier_tag: "acme", prefix: "44", rate: 10, description: "UK") { id } }',
    );
  });

  afterAll(async () => {
    await app.close();
    await ctx.destroy();
  });

  it('applies a deck and answers what it did', async () => {
    const answer = await post(
      'pricelist_tag=retail&carrier_tag=acme&effective=2026-07-01T00:00:00Z',
      'prefix,rate,description\n44,12,UK\n4420,8,London\nabc,1,\n',
    );
    expect(answer).toEqual({
      status: 200,
      body: {
        added: 1,
        changed: 1,
        unchanged: 0,
        removed: 0,
        rejected: [{ line: 4, reason: expect.stringMatching(/^BAD_USER_INPUT: prefix: must be digits/) }],
        rejected_count: 1,
        dry_run: false,
        effective: '2026-07-01T00:00:00.000Z',
      },
    });
  });

  it('exposes previous_versions and the q filter on rates; routing answers by the call time', async () => {
    const { PricelistRate } = await ok(`{ PricelistRate(pricelist_tag: "retail", carrier_tag: "acme", prefix: "44") {
      rate datetime_start previous_versions { datetime_start datetime_end connect_fee rate rate_increment interval_start description } } }`);
    expect(PricelistRate).toEqual({
      rate: 12,
      datetime_start: '2026-07-01T00:00:00Z',
      previous_versions: [
        {
          datetime_start: null,
          datetime_end: '2026-07-01T00:00:00Z',
          connect_fee: 0,
          rate: 10,
          rate_increment: 1,
          interval_start: 0,
          description: 'UK',
        },
      ],
    });
    const found = await ok('{ allPricelistRates(filter: { q: "lond" }) { prefix previous_versions { rate } } }');
    expect(found.allPricelistRates).toEqual([{ prefix: '4420', previous_versions: [] }]);
    expect((await ok('{ allPricelistRates(filter: { q: "ACME" }) { prefix } }')).allPricelistRates).toHaveLength(2);
    expect((await ok('{ _allPricelistRatesMeta(filter: { q: "44" }) { count } }'))._allPricelistRatesMeta.count).toBe(2);
    // Now is after the effective time: the new terms.
    expect(
      (await ok('{ Account(account_tag: "alice") { destination_rate(destination: "4479") { rate } } }')).Account.destination_rate,
    ).toEqual({ rate: 12 });
  });

  it('an API update may not move a rate before its previous version', async () => {
    const answer = await graphql(
      url,
      'mutation { updatePricelistRate(pricelist_tag: "retail", carrier_tag: "acme", prefix: "44", datetime_start: "2026-01-01T00:00:00") { id } }',
    );
    expect(answer.body.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'datetime_start' });
    await ok('mutation { updatePricelistRate(pricelist_tag: "retail", carrier_tag: "acme", prefix: "44", rate: 13) { id } }');
    // From the end of the previous version on is fine.
    const { updatePricelistRate } = await ok(
      'mutation { updatePricelistRate(pricelist_tag: "retail", carrier_tag: "acme", prefix: "44", datetime_start: "2026-07-01T00:00:00") { rate datetime_start previous_versions { rate } } }',
    );
    expect(updatePricelistRate).toEqual({ rate: 13, datetime_start: '2026-07-01T00:00:00Z', previous_versions: [{ rate: 10 }] });
  });

  it('is idempotent and a dry run writes nothing', async () => {
    const deck = 'prefix,rate,description\n44,13,UK\n4420,8,London\n';
    const query = 'pricelist_tag=retail&carrier_tag=acme&effective=2026-07-01T00:00:00Z';
    expect((await post(query, deck)).body).toMatchObject({ added: 0, changed: 0, unchanged: 2, removed: 0, rejected_count: 0 });
    const before = await ctx.mongo.collections.rates.find({}).sort({ prefix: 1 }).toArray();
    const dry = await post(
      'pricelist_tag=retail&carrier_tag=acme&effective=2026-08-01T02:00:00%2B02:00&dry_run=true',
      'prefix,rate\n44,1\n',
    );
    expect(dry.body).toMatchObject({ changed: 1, removed: 1, dry_run: true, effective: '2026-08-01T00:00:00.000Z' });
    expect(await ctx.mongo.collections.rates.find({}).sort({ prefix: 1 }).toArray()).toEqual(before);
  });

  it.each([
    ['no pricelist', 'carrier_tag=acme', 'prefix,rate\n1,1\n', 'BAD_USER_INPUT', 'pricelist_tag'],
    ['an unknown pricelist', 'pricelist_tag=nope&carrier_tag=acme', 'prefix,rate\n1,1\n', 'INVALID_REFERENCE', 'pricelist_tag'],
    ['an unknown carrier', 'pricelist_tag=retail&carrier_tag=nope', 'prefix,rate\n1,1\n', 'INVALID_REFERENCE', 'carrier_tag'],
    ['a bad effective time', 'pricelist_tag=retail&carrier_tag=acme&effective=soon', 'prefix,rate\n1,1\n', 'BAD_USER_INPUT', 'effective'],
    ['a bad dry_run', 'pricelist_tag=retail&carrier_tag=acme&dry_run=yes', 'prefix,rate\n1,1\n', 'BAD_USER_INPUT', 'dry_run'],
    ['an unknown parameter', 'pricelist_tag=retail&carrier_tag=acme&force=1', 'prefix,rate\n1,1\n', 'BAD_USER_INPUT', 'force'],
    ['a bad header', 'pricelist_tag=retail&carrier_tag=acme', 'prefix,price\n1,1\n', 'BAD_USER_INPUT', 'header'],
    ['an empty body', 'pricelist_tag=retail&carrier_tag=acme', '', 'BAD_USER_INPUT', 'header'],
  ])('answers 400 in the API error shape for %s, writing nothing', async (_name, query, body, code, field) => {
    const before = await ctx.mongo.collections.rates.countDocuments();
    const answer = await post(query, body);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ errors: [{ message: expect.any(String), extensions: expect.objectContaining({ code, field }) }] });
    expect(await ctx.mongo.collections.rates.countDocuments()).toBe(before);
  });

  it('deletePricelistRate removes the rate with all its versions', async () => {
    const { deletePricelistRate } = await ok(
      'mutation { deletePricelistRate(pricelist_tag: "retail", carrier_tag: "acme", prefix: "44") { prefix previous_versions { rate } } }',
    );
    expect(deletePricelistRate).toEqual({ prefix: '44', previous_versions: [{ rate: 10 }] });
    expect(await ctx.mongo.collections.rates.countDocuments({ prefix: '44' })).toBe(0);
  });

  it('refuses a body that is not text/csv', async () => {
    const answer = await post('pricelist_tag=retail&carrier_tag=acme', '{"prefix":"1"}', 'application/json');
    expect(answer.status).toBe(415);
    expect(answer.body).toMatchObject({ errors: [{ extensions: { code: 'BAD_USER_INPUT' } }] });
  });
});

describe('rate decks over HTTP with tokens', () => {
  const reader = 'reader-secret-0123456789';
  const writer = 'writer-secret-0123456789';
  let ctx: TestContext;
  let app: FastifyInstance;
  let url: string;

  beforeAll(async () => {
    ctx = await createTestContext({ RATING_TOKENS: `reader:read:${reader},writer:read+write:${writer}` });
    app = await buildApi(ctx);
    url = await app.listen({ host: '127.0.0.1', port: 0 });
    await ctx.mongo.collections.pricelists.insertOne({ _id: 'p1', pricelist_tag: 'retail', name: null, currency: 'USD' });
    await ctx.mongo.collections.carriers.insertOne({
      _id: 'c1',
      carrier_tag: 'acme',
      host: '10.0.0.1',
      port: 5060,
      protocol: 'UDP',
      active: true,
    });
  });

  afterAll(async () => {
    await app.close();
    await ctx.destroy();
  });

  const post = (secret: string | null) =>
    fetch(`${url}/v1/rate-decks?pricelist_tag=retail&carrier_tag=acme`, {
      method: 'POST',
      headers: { 'content-type': 'text/csv', ...(secret ? { authorization: `Bearer ${secret}` } : {}) },
      body: 'prefix,rate\n44,1\n',
    });

  it('needs the write scope', async () => {
    expect((await post(null)).status).toBe(401);
    const denied = await post(reader);
    expect(denied.status).toBe(403);
    expect(await denied.json()).toMatchObject({ errors: [{ extensions: { code: 'FORBIDDEN' } }] });
    expect(await ctx.mongo.collections.rates.countDocuments()).toBe(0);
    const allowed = await post(writer);
    expect(allowed.status).toBe(200);
    expect(await allowed.json()).toMatchObject({ added: 1 });
  });
});
