import { ApiHarness, expectError, startApi } from './api-harness';

/**
 * destination_rate / least_cost_routing on Account and the leastCostRouting query answer from the
 * same in-memory rating index the engine rates calls with (docs/DESIGN.md section 3).
 */
describe('API routing answers', () => {
  let api: ApiHarness;

  beforeAll(async () => {
    api = await startApi();
    await api.ok(`mutation {
      p1: createPricelist(pricelist_tag: "retail", currency: USD) { id }
      p2: createPricelist(pricelist_tag: "promo", currency: USD) { id }
      c1: createCarrier(carrier_tag: "cheap", host: "10.0.0.1", port: 5060) { id }
      c2: createCarrier(carrier_tag: "dear", host: "10.0.0.2", port: 5061, protocol: TCP) { id }
      c3: createCarrier(carrier_tag: "mid", host: "gw.example", port: 5062) { id }
    }`);
    await api.ok(`mutation {
      r1: createPricelistRate(pricelist_tag: "retail", carrier_tag: "cheap", prefix: "44", rate: 10, connect_fee: 1) { id }
      r2: createPricelistRate(pricelist_tag: "retail", carrier_tag: "dear", prefix: "44", rate: 30) { id }
      r3: createPricelistRate(pricelist_tag: "retail", carrier_tag: "mid", prefix: "4420", rate: 20, rate_increment: 60) { id }
      r4: createPricelistRate(pricelist_tag: "retail", carrier_tag: "dear", prefix: "4420", rate: 25) { id }
      r5: createPricelistRate(pricelist_tag: "promo", carrier_tag: "cheap", prefix: "1", rate: 1, datetime_end: "2000-01-01T00:00:00") { id }
    }`);
    await api.ok(`mutation {
      a: createAccount(account_tag: "plain", pricelist_tags: ["retail"]) { id }
      b: createAccount(account_tag: "prefers-dear", pricelist_tags: ["retail"], carrier_tags: ["dear"]) { id }
      c: createAccount(account_tag: "forced", pricelist_tags: ["retail"], carrier_tags_override: ["cheap"]) { id }
    }`);
  });

  afterAll(async () => {
    await api.close();
  });

  const accountRoute = (tag: string, destination: string) =>
    api.ok(`{ Account(account_tag: "${tag}") {
      destination_rate(destination: "${destination}") { id pricelist_tag carrier_tag prefix rate rate_increment }
      least_cost_routing(destination: "${destination}") } }`);

  it('takes the longest matching prefix and orders its carriers by rate', async () => {
    const { Account } = await accountRoute('plain', '442071234567');
    expect(Account.least_cost_routing).toEqual(['UDP:gw.example:5062', 'TCP:10.0.0.2:5061']);
    expect(Account.destination_rate).toEqual({
      id: expect.any(String),
      pricelist_tag: 'retail',
      carrier_tag: 'mid',
      prefix: '4420',
      rate: 20,
      rate_increment: 60,
    });
    expect((await accountRoute('plain', '4479')).Account.least_cost_routing).toEqual(['UDP:10.0.0.1:5060', 'TCP:10.0.0.2:5061']);
  });

  it('moves preferred carriers to the front and keeps only forced carriers', async () => {
    expect((await accountRoute('prefers-dear', '4479')).Account.least_cost_routing).toEqual(['TCP:10.0.0.2:5061', 'UDP:10.0.0.1:5060']);
    const forced = (await accountRoute('forced', '4479')).Account;
    expect(forced.least_cost_routing).toEqual(['UDP:10.0.0.1:5060']);
    expect(forced.destination_rate).toMatchObject({ carrier_tag: 'cheap', rate: 10 });
    // The override applies after the longest prefix is chosen: cheap has no 4420 rate.
    expect((await accountRoute('forced', '4420')).Account).toEqual({ destination_rate: null, least_cost_routing: [] });
  });

  it('answers null without a destination and [] / null for an unreachable one', async () => {
    expect((await api.ok('{ Account(account_tag: "plain") { destination_rate { id } least_cost_routing } }')).Account).toEqual({
      destination_rate: null,
      least_cost_routing: null,
    });
    expect((await accountRoute('plain', '1555')).Account).toEqual({ destination_rate: null, least_cost_routing: [] });
  });

  it('answers leastCostRouting for given pricelists and preferences', async () => {
    const route = async (args: string) => (await api.ok(`{ leastCostRouting(${args}) }`)).leastCostRouting;
    expect(await route('destination: "4479", pricelist_tags: ["retail"]')).toEqual(['UDP:10.0.0.1:5060', 'TCP:10.0.0.2:5061']);
    expect(await route('destination: "4479", pricelist_tags: ["retail"], carrier_tags: ["dear"]')).toEqual([
      'TCP:10.0.0.2:5061',
      'UDP:10.0.0.1:5060',
    ]);
    expect(await route('destination: "4479", pricelist_tags: ["retail"], carrier_tags_override: ["dear"]')).toEqual(['TCP:10.0.0.2:5061']);
    // promo's only rate expired in 2000.
    expect(await route('destination: "1555", pricelist_tags: ["promo", "retail"]')).toEqual([]);
    expect(await route('destination: "4479"')).toEqual([]);
    expectError(await api.gql('{ leastCostRouting(pricelist_tags: ["retail"]) }'), 'BAD_USER_INPUT', 'destination');
    expectError(
      await api.gql('{ leastCostRouting(destination: "sip:gw.example.net", pricelist_tags: ["retail"]) }'),
      'BAD_USER_INPUT',
      'destination',
    );
    // Numbers as SIP proxies send them route like the plain number (issue 11).
    expect(await route('destination: "44 79", pricelist_tags: ["retail"]')).toEqual(['UDP:10.0.0.1:5060', 'TCP:10.0.0.2:5061']);
    expect(await route('destination: "<sip:+44-79@gw.example.net;user=phone>", pricelist_tags: ["retail"]')).toEqual([
      'UDP:10.0.0.1:5060',
      'TCP:10.0.0.2:5061',
    ]);
  });

  it('sees its own writes at once (the cache is invalidated on every write)', async () => {
    const route = async () => (await api.ok('{ leastCostRouting(destination: "4479", pricelist_tags: ["retail"]) }')).leastCostRouting;
    expect(await route()).toEqual(['UDP:10.0.0.1:5060', 'TCP:10.0.0.2:5061']);
    await api.ok('mutation { updateCarrier(carrier_tag: "cheap", active: false) { id } }');
    expect(await route()).toEqual(['TCP:10.0.0.2:5061']);
    await api.ok('mutation { updatePricelistRate(pricelist_tag: "retail", carrier_tag: "dear", prefix: "44", rate: 5) { id } }');
    await api.ok('mutation { updateCarrier(carrier_tag: "cheap", active: true) { id } }');
    expect(await route()).toEqual(['TCP:10.0.0.2:5061', 'UDP:10.0.0.1:5060']);
  });
});
