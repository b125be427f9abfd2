import type { CarrierDoc, PricelistRateDoc } from '../../../src/shared/domain/types';
import { carrierAddress, carrierRouteString, RatingIndex, toRateSnapshot, type RouteQuery } from '../../../src/shared/domain/rating';

const T0 = Date.UTC(2024, 0, 1);
const NOW = new Date(T0 + 86_400_000);

function carrier(tag: string, over: Partial<CarrierDoc> = {}): CarrierDoc {
  return { _id: `car-${tag}`, carrier_tag: tag, host: `${tag}.example.net`, port: 5060, protocol: 'UDP', active: true, ...over };
}

let seq = 0;
function rate(pricelist: string, carrierTag: string, prefix: string, r: number, over: Partial<PricelistRateDoc> = {}): PricelistRateDoc {
  seq += 1;
  return {
    _id: over._id ?? `rate-${seq}`,
    pricelist_tag: pricelist,
    carrier_tag: carrierTag,
    prefix,
    datetime_start: null,
    datetime_end: null,
    description: null,
    connect_fee: 0,
    rate: r,
    rate_increment: 60,
    interval_start: 0,
    ...over,
  };
}

const CARRIERS = ['a', 'b', 'c', 'd', 'e'].map((t) => carrier(t));

function q(destination: string, over: Partial<RouteQuery> = {}): RouteQuery {
  return { pricelistTags: ['retail'], destination, at: NOW, ...over };
}

const tagsOf = (index: RatingIndex, query: RouteQuery) => index.route(query).map((c) => c.carrier.carrier_tag);
const prefixOf = (index: RatingIndex, query: RouteQuery) => index.bestRate(query)?.rate.prefix ?? null;

describe('RatingIndex prefix choice', () => {
  const index = RatingIndex.build(
    [
      rate('retail', 'a', '4', 5),
      rate('retail', 'b', '44', 10),
      rate('retail', 'c', '4420', 12),
      rate('retail', 'd', '4420', 11),
      rate('other', 'e', '442071', 1),
    ],
    CARRIERS,
  );

  test.each<[string, string, string | null, string[]]>([
    ['longest prefix wins', '442071234567', '4420', ['d', 'c']],
    ['falls back to a shorter prefix', '443012', '44', ['b']],
    ['shortest prefix', '4912', '4', ['a']],
    ['destination equal to a prefix', '44', '44', ['b']],
    ['destination shorter than a longer prefix', '442', '44', ['b']],
    ['no prefix matches: unreachable', '1555', null, []],
    ['empty destination: unreachable without a "" prefix', '', null, []],
  ])('%s (%s)', (_name, destination, prefix, carriers) => {
    expect(prefixOf(index, q(destination))).toBe(prefix);
    expect(tagsOf(index, q(destination))).toEqual(carriers);
  });

  test('rates of pricelists the account does not use are ignored', () => {
    expect(prefixOf(index, q('442071234567', { pricelistTags: ['retail'] }))).toBe('4420');
    expect(tagsOf(index, q('442071234567', { pricelistTags: ['other', 'retail'] }))).toEqual(['e']);
  });

  test('no pricelists: unreachable', () => {
    expect(index.route(q('4420', { pricelistTags: null }))).toEqual([]);
    expect(index.route(q('4420', { pricelistTags: [] }))).toEqual([]);
    expect(index.route(q('4420', { pricelistTags: ['missing'] }))).toEqual([]);
    expect(index.bestRate(q('4420', { pricelistTags: [] }))).toBeNull();
  });

  test('the empty prefix matches every destination', () => {
    const withDefault = RatingIndex.build([rate('retail', 'a', '', 99), rate('retail', 'b', '44', 10)], CARRIERS);
    expect(prefixOf(withDefault, q('1555'))).toBe('');
    expect(prefixOf(withDefault, q(''))).toBe('');
    expect(prefixOf(withDefault, q('4420'))).toBe('44');
  });

  test('longest prefix is taken across all pricelists, not per pricelist in order', () => {
    const idx = RatingIndex.build([rate('p1', 'a', '44', 1), rate('p2', 'b', '441', 50)], CARRIERS);
    expect(tagsOf(idx, q('4412', { pricelistTags: ['p1', 'p2'] }))).toEqual(['b']);
    expect(tagsOf(idx, q('4422', { pricelistTags: ['p1', 'p2'] }))).toEqual(['a']);
  });

  test('rates of several pricelists at the same prefix are merged', () => {
    const idx = RatingIndex.build([rate('p1', 'a', '44', 7), rate('p2', 'b', '44', 3)], CARRIERS);
    expect(tagsOf(idx, q('4412', { pricelistTags: ['p1', 'p2'] }))).toEqual(['b', 'a']);
  });

  test('a carrier in several pricelists keeps its cheapest rate', () => {
    const idx = RatingIndex.build(
      [rate('p1', 'a', '44', 9, { _id: 'p1a' }), rate('p2', 'a', '44', 4, { _id: 'p2a' }), rate('p2', 'b', '44', 6)],
      CARRIERS,
    );
    const route = idx.route(q('4412', { pricelistTags: ['p1', 'p2'] }));
    expect(route.map((c) => [c.carrier.carrier_tag, c.rate.id])).toEqual([
      ['a', 'p2a'],
      ['b', expect.any(String)],
    ]);
  });

  test('equal rates of one carrier: the earlier pricelist in the account order wins', () => {
    const idx = RatingIndex.build([rate('p1', 'a', '44', 4, { _id: 'p1a' }), rate('p2', 'a', '44', 4, { _id: 'p2a' })], CARRIERS);
    expect(idx.bestRate(q('44', { pricelistTags: ['p1', 'p2'] }))?.rate.id).toBe('p1a');
    expect(idx.bestRate(q('44', { pricelistTags: ['p2', 'p1'] }))?.rate.id).toBe('p2a');
    expect(idx.bestRate(q('44', { pricelistTags: ['p2', 'p1', 'p2'] }))?.rate.pricelist_tag).toBe('p2');
  });
});

describe('RatingIndex on SIP/TEL URI destinations (docs/DESIGN.md section 4)', () => {
  const index = RatingIndex.build(
    [rate('retail', 'b', '44', 10), rate('retail', 'c', '4420', 12), rate('retail', 'd', '4420', 11), rate('retail', 'a', '4', 5)],
    CARRIERS,
  );
  const plain = '442071234567';

  test.each([
    'sip:+442071234567@gw.example.net;user=phone',
    '<sip:+44 20 7123 4567@10.0.0.1:5060;user=phone>',
    '"Alice" <sips:+44-20-7123-4567@example.com>;tag=1',
    'tel:+44-20-7123-4567;phone-context=example.com',
    'SIP:%2B442071234567@HOST?Subject=x',
    '+44 (20) 7123.4567',
  ])('%s rates, routes and picks its best rate like the plain number', (destination) => {
    expect(index.matchingPrefixRates(['retail'], destination, NOW)).toEqual(index.matchingPrefixRates(['retail'], plain, NOW));
    expect(index.route(q(destination))).toEqual(index.route(q(plain)));
    expect(prefixOf(index, q(destination))).toBe('4420');
    expect(tagsOf(index, q(destination))).toEqual(['d', 'c']);
  });

  test('a URI naming no number matches only a catch-all rate', () => {
    expect(index.route(q('sip:host;user=phone'))).toEqual([]);
    const catchAll = RatingIndex.build([rate('retail', 'e', '', 1)], CARRIERS);
    expect(prefixOf(catchAll, q('sip:@host'))).toBe('');
  });
});

describe('RatingIndex validity windows', () => {
  const START = new Date(T0 + 1000);
  const END = new Date(T0 + 5000);
  const index = RatingIndex.build(
    [rate('retail', 'a', '4420', 1, { datetime_start: START, datetime_end: END }), rate('retail', 'b', '44', 10)],
    CARRIERS,
  );

  test.each<[string, number, string]>([
    ['before the start', 999, '44'],
    ['at the start (inclusive)', 1000, '4420'],
    ['inside', 3000, '4420'],
    ['1 ms before the end', 4999, '4420'],
    ['at the end (exclusive)', 5000, '44'],
    ['after the end', 9000, '44'],
  ])('%s', (_name, offset, prefix) => {
    expect(prefixOf(index, q('44201', { at: new Date(T0 + offset) }))).toBe(prefix);
  });

  test('open start and open end', () => {
    const idx = RatingIndex.build(
      [rate('retail', 'a', '1', 1, { datetime_end: END }), rate('retail', 'b', '2', 1, { datetime_start: START })],
      CARRIERS,
    );
    expect(prefixOf(idx, q('1', { at: new Date(0) }))).toBe('1');
    expect(prefixOf(idx, q('1', { at: END }))).toBeNull();
    expect(prefixOf(idx, q('2', { at: new Date(T0 + 999) }))).toBeNull();
    expect(prefixOf(idx, q('2', { at: new Date(8.64e15) }))).toBe('2');
  });

  test('successive windows of one carrier', () => {
    const idx = RatingIndex.build(
      [
        rate('retail', 'a', '44', 5, { _id: 'old', datetime_end: START }),
        rate('retail', 'a', '44', 7, { _id: 'new', datetime_start: START }),
      ],
      CARRIERS,
    );
    expect(idx.bestRate(q('44', { at: new Date(T0) }))?.rate.id).toBe('old');
    expect(idx.bestRate(q('44', { at: START }))?.rate.id).toBe('new');
  });

  test('an invalid date is rejected', () => {
    expect(() => index.route(q('44', { at: new Date(NaN) }))).toThrow(RangeError);
  });
});

describe('RatingIndex carriers', () => {
  test('inactive carrier is skipped, falling back to a shorter prefix', () => {
    const idx = RatingIndex.build(
      [rate('retail', 'x', '4420', 1), rate('retail', 'b', '44', 10)],
      [...CARRIERS, carrier('x', { active: false })],
    );
    expect(tagsOf(idx, q('44201'))).toEqual(['b']);
    expect(prefixOf(idx, q('44201'))).toBe('44');
  });

  test('rate whose carrier does not exist is skipped', () => {
    const idx = RatingIndex.build([rate('retail', 'ghost', '4420', 1), rate('retail', 'b', '44', 10)], CARRIERS);
    expect(tagsOf(idx, q('44201'))).toEqual(['b']);
    expect(idx.size).toBe(1);
  });

  test('only inactive carriers: unreachable', () => {
    const idx = RatingIndex.build([rate('retail', 'x', '44', 1)], [carrier('x', { active: false })]);
    expect(idx.route(q('44'))).toEqual([]);
    expect(idx.carrier('x')?.active).toBe(false);
  });

  test('carrier address and route string', () => {
    const idx = RatingIndex.build(
      [rate('retail', 't', '1', 1), rate('retail', 'v6', '1', 2)],
      [
        carrier('t', { host: '10.0.0.1', port: 5080, protocol: 'TCP' }),
        carrier('v6', { host: '2001:db8::1', port: 5060, protocol: 'UDP' }),
      ],
    );
    const [first, second] = idx.route(q('1'));
    expect(first?.carrierIp).toBe('10.0.0.1:5080');
    expect(first?.routeString).toBe('TCP:10.0.0.1:5080');
    expect(second?.carrierIp).toBe('[2001:db8::1]:5060');
    expect(second?.routeString).toBe('UDP:[2001:db8::1]:5060');
    expect(carrierAddress({ host: 'sip.example.net', port: 5060 })).toBe('sip.example.net:5060');
    expect(carrierRouteString({ host: 'sip.example.net', port: 5060, protocol: 'UDP' })).toBe('UDP:sip.example.net:5060');
  });
});

describe('RatingIndex carrier order', () => {
  const index = RatingIndex.build(
    [
      rate('retail', 'a', '44', 30),
      rate('retail', 'b', '44', 10),
      rate('retail', 'c', '44', 20, { connect_fee: 5 }),
      rate('retail', 'd', '44', 20, { connect_fee: 1 }),
      rate('retail', 'e', '44', 10),
      rate('retail', 'a', '4', 1), // cheaper, but a shorter prefix
    ],
    CARRIERS,
  );

  test.each<[string, Partial<RouteQuery>, string[]]>([
    ['ascending rate, then connect fee, then carrier_tag', {}, ['b', 'e', 'd', 'c', 'a']],
    ['preferred carriers to the front in the account order', { carrierTags: ['c', 'a'] }, ['c', 'a', 'b', 'e', 'd']],
    ['preferred carrier without a rate here is ignored', { carrierTags: ['zzz', 'd'] }, ['d', 'b', 'e', 'c', 'a']],
    ['duplicate preferred tags', { carrierTags: ['a', 'a', 'c'] }, ['a', 'c', 'b', 'e', 'd']],
    ['empty preference list', { carrierTags: [] }, ['b', 'e', 'd', 'c', 'a']],
    ['override keeps only its carriers, in its order', { carrierTagsOverride: ['a', 'd'] }, ['a', 'd']],
    ['override beats preference', { carrierTags: ['b', 'd'], carrierTagsOverride: ['d', 'a', 'b'] }, ['d', 'a', 'b']],
    ['override skips carriers without a rate here', { carrierTagsOverride: ['zzz', 'c'] }, ['c']],
    ['override naming only carriers without rates: unreachable', { carrierTagsOverride: ['zzz', 'yyy'] }, []],
    ['empty override is no override', { carrierTagsOverride: [] }, ['b', 'e', 'd', 'c', 'a']],
    ['null override is no override', { carrierTagsOverride: null, carrierTags: ['a'] }, ['a', 'b', 'e', 'd', 'c']],
  ])('%s', (_name, over, expected) => {
    expect(tagsOf(index, q('4412', over))).toEqual(expected);
  });

  test('override does not widen the prefix search to shorter prefixes', () => {
    const idx = RatingIndex.build([rate('retail', 'a', '4420', 1), rate('retail', 'b', '44', 1)], CARRIERS);
    expect(idx.route(q('44201', { carrierTagsOverride: ['b'] }))).toEqual([]);
  });

  test('bestRate is the first candidate and carries the snapshot', () => {
    const best = index.bestRate(q('4412', { carrierTags: ['d'] }));
    expect(best?.carrier.carrier_tag).toBe('d');
    expect(best?.rate).toMatchObject({ pricelist_tag: 'retail', carrier_tag: 'd', prefix: '44', rate: 20, connect_fee: 1 });
    expect(toRateSnapshot(best!.rate)).toEqual({
      pricelist_tag: 'retail',
      carrier_tag: 'd',
      prefix: '44',
      description: null,
      connect_fee: 1,
      rate: 20,
      rate_increment: 60,
      interval_start: 0,
    });
  });

  test('results are copies: mutating them does not change the index', () => {
    const first = index.route(q('4412'));
    first[0]!.rate.rate = 999_999;
    first[0]!.carrier.active = false;
    expect(tagsOf(index, q('4412'))).toEqual(['b', 'e', 'd', 'c', 'a']);
    expect(index.bestRate(q('4412'))?.rate.rate).toBe(10);
  });

  test('the input arrays are not retained in a way that changes results', () => {
    const rates = [rate('retail', 'a', '44', 1)];
    const carriers = [carrier('a')];
    const idx = RatingIndex.build(rates, carriers);
    carriers[0]!.active = false;
    rates.length = 0;
    expect(tagsOf(idx, q('44'))).toEqual(['a']);
  });

  test('matchingPrefixRates lists every usable rate at the longest prefix', () => {
    const idx = RatingIndex.build(
      [rate('p1', 'a', '44', 9), rate('p2', 'a', '44', 4), rate('p2', 'b', '44', 6), rate('p1', 'c', '4', 1)],
      CARRIERS,
    );
    const m = idx.matchingPrefixRates(['p1', 'p2'], '4412', NOW);
    expect(m?.prefix).toBe('44');
    expect(m?.rates.map((r) => [r.rate.pricelist_tag, r.carrier.carrier_tag, r.pricelistRank])).toEqual([
      ['p1', 'a', 0],
      ['p2', 'a', 1],
      ['p2', 'b', 1],
    ]);
    expect(idx.matchingPrefixRates(['p1'], '9', NOW)).toBeNull();
  });
});
