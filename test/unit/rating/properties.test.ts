import fc from 'fast-check';
import type { CarrierDoc, PricelistRateDoc, RateTerms, RunningTransaction } from '../../../src/shared/domain/types';
import {
  availableBalance,
  callDurationSeconds,
  canAffordStart,
  computeFee,
  maxAvailableUnits,
  RatingIndex,
  type RouteQuery,
} from '../../../src/shared/domain/rating';

// ---- slow, obviously-correct references -------------------------------------------------

/** Fee by walking the call increment by increment. */
function feeRef(t: RateTerms, duration: number): bigint {
  if (duration === 0) return 0n;
  const step = t.rate_increment === 0 ? 1 : t.rate_increment;
  let charged = 0;
  for (let second = t.interval_start; second < duration; second += step) charged += step;
  const cost = BigInt(t.rate) * BigInt(charged);
  let minutes = cost / 60n;
  if (minutes * 60n < cost) minutes += 1n;
  return BigInt(t.connect_fee) + minutes;
}

/** Fee of big numbers by remainders rather than a loop. */
function feeRefBig(t: RateTerms, duration: number): bigint {
  if (duration === 0) return 0n;
  const step = BigInt(t.rate_increment === 0 ? 1 : t.rate_increment);
  const billable = BigInt(Math.max(0, duration - t.interval_start));
  const rem = billable % step;
  const charged = rem === 0n ? billable : billable + step - rem;
  const cost = BigInt(t.rate) * charged;
  return BigInt(t.connect_fee) + cost / 60n + (cost % 60n === 0n ? 0n : 1n);
}

/** Max units by trying every duration. */
function maxUnitsRef(t: RateTerms, available: bigint, cap: number): number {
  let best = 0;
  for (let d = 0; d <= cap; d += 1) if (feeRef(t, d) <= available) best = d;
  // fee(0) = 0 fits any non-negative balance; a negative one fits nothing.
  return available < 0n ? 0 : best;
}

type Candidate = [carrier: string, rateId: string];

/** Routing by scanning every rate. */
function routeRef(rates: PricelistRateDoc[], carriers: CarrierDoc[], q: RouteQuery): Candidate[] {
  const lists = [...new Set(q.pricelistTags ?? [])];
  const carrierByTag = new Map<string, CarrierDoc>();
  for (const c of carriers) carrierByTag.set(c.carrier_tag, c);
  const t = q.at.getTime();
  const usable = rates
    .map((r, seq) => ({ r, seq, rank: lists.indexOf(r.pricelist_tag) }))
    .filter(
      ({ r, rank }) =>
        rank >= 0 &&
        carrierByTag.get(r.carrier_tag)?.active === true &&
        (r.datetime_start === null || r.datetime_start.getTime() <= t) &&
        (r.datetime_end === null || t < r.datetime_end.getTime()) &&
        q.destination.startsWith(r.prefix),
    );
  if (usable.length === 0) return [];
  const longest = Math.max(...usable.map(({ r }) => r.prefix.length));
  const atLongest = usable.filter(({ r }) => r.prefix.length === longest);
  const best = new Map<string, (typeof atLongest)[number]>();
  for (const x of atLongest) {
    const y = best.get(x.r.carrier_tag);
    const better =
      !y ||
      x.r.rate < y.r.rate ||
      (x.r.rate === y.r.rate &&
        (x.r.connect_fee < y.r.connect_fee ||
          (x.r.connect_fee === y.r.connect_fee && (x.rank < y.rank || (x.rank === y.rank && x.seq < y.seq)))));
    if (better) best.set(x.r.carrier_tag, x);
  }
  const sorted = [...best.values()].sort(
    (a, b) =>
      a.r.rate - b.r.rate ||
      a.r.connect_fee - b.r.connect_fee ||
      (a.r.carrier_tag < b.r.carrier_tag ? -1 : a.r.carrier_tag > b.r.carrier_tag ? 1 : 0),
  );
  const out: Candidate[] = sorted.map(({ r }) => [r.carrier_tag, r._id]);
  const override = q.carrierTagsOverride ?? [];
  if (override.length > 0) {
    const res: Candidate[] = [];
    for (const tag of override) {
      const c = out.find(([ct]) => ct === tag);
      if (c && !res.includes(c)) res.push(c);
    }
    return res;
  }
  const front: Candidate[] = [];
  for (const tag of q.carrierTags ?? []) {
    const c = out.find(([ct]) => ct === tag);
    if (c && !front.includes(c)) front.push(c);
  }
  return [...front, ...out.filter((c) => !front.includes(c))];
}

// ---- generators ------------------------------------------------------------------------

const smallTerms = fc.record({
  connect_fee: fc.integer({ min: 0, max: 500 }),
  rate: fc.integer({ min: 0, max: 600 }),
  rate_increment: fc.integer({ min: 0, max: 90 }),
  interval_start: fc.integer({ min: 0, max: 90 }),
});

const bigTerms = fc.record({
  connect_fee: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  rate: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  rate_increment: fc.integer({ min: 0, max: 3600 }),
  interval_start: fc.integer({ min: 0, max: 3600 }),
});

const T0 = Date.UTC(2024, 0, 1);
const instant = fc.integer({ min: 0, max: 6 }).map((s) => new Date(T0 + s * 1000));
const digits = (maxLength: number) => fc.string({ unit: fc.constantFrom('1', '2'), maxLength });
const carrierTag = fc.constantFrom('a', 'b', 'c', 'd', 'e');
const pricelistTag = fc.constantFrom('p1', 'p2', 'p3');

const carriersArb = fc
  .uniqueArray(fc.record({ tag: carrierTag, active: fc.boolean() }), { selector: (c) => c.tag, maxLength: 5 })
  .map((cs) =>
    cs.map(({ tag, active }): CarrierDoc => ({
      _id: `car-${tag}`,
      carrier_tag: tag,
      host: `${tag}.example.net`,
      port: 5060,
      protocol: 'UDP',
      active,
    })),
  );

const ratesArb = fc
  .array(
    fc.record({
      pricelist_tag: pricelistTag,
      carrier_tag: carrierTag,
      prefix: digits(2),
      rate: fc.integer({ min: 0, max: 2 }),
      connect_fee: fc.integer({ min: 0, max: 2 }),
      datetime_start: fc.option(instant),
      datetime_end: fc.option(instant),
    }),
    { maxLength: 25 },
  )
  .map((rs) =>
    rs.map((r, i): PricelistRateDoc => ({
      ...r,
      _id: `rate-${i}`,
      description: null,
      rate_increment: 60,
      interval_start: 0,
    })),
  );

const queryArb: fc.Arbitrary<RouteQuery> = fc.record({
  pricelistTags: fc.option(fc.array(fc.constantFrom('p1', 'p2', 'p3', 'p4'), { maxLength: 4 })),
  destination: digits(5),
  at: instant,
  carrierTags: fc.option(fc.array(carrierTag, { maxLength: 4 })),
  carrierTagsOverride: fc.option(fc.array(carrierTag, { maxLength: 3 })),
});

// ---- properties ------------------------------------------------------------------------

describe('properties against reference implementations', () => {
  test('computeFee equals fee counted increment by increment', () => {
    fc.assert(
      fc.property(smallTerms, fc.integer({ min: 0, max: 3000 }), (t, d) => {
        expect(computeFee(t, d)).toBe(feeRef(t, d));
      }),
      { numRuns: 2000 },
    );
  });

  test('computeFee is exact with numbers beyond 2^53', () => {
    fc.assert(
      fc.property(bigTerms, fc.integer({ min: 0, max: 1_000_000 }), (t, d) => {
        expect(computeFee(t, d)).toBe(feeRefBig(t, d));
      }),
      { numRuns: 2000 },
    );
  });

  test('computeFee never decreases as the call goes on', () => {
    fc.assert(
      fc.property(bigTerms, fc.integer({ min: 0, max: 100_000 }), (t, d) => {
        expect(computeFee(t, d + 1) >= computeFee(t, d)).toBe(true);
      }),
    );
  });

  test('maxAvailableUnits equals a linear scan for prepaid accounts', () => {
    fc.assert(
      fc.property(smallTerms, fc.bigInt({ min: -50n, max: 6000n }), fc.integer({ min: 0, max: 300 }), (t, available, cap) => {
        expect(maxAvailableUnits(t, available, 'PREPAID', cap)).toBe(maxUnitsRef(t, available, cap));
      }),
      { numRuns: 1500 },
    );
  });

  test('maxAvailableUnits with the default cap fits and is maximal', () => {
    fc.assert(
      fc.property(bigTerms, fc.bigInt({ min: 0n, max: 10n ** 22n }), (t, available) => {
        const units = maxAvailableUnits(t, available, 'PREPAID');
        expect(units).toBeGreaterThanOrEqual(0);
        expect(units).toBeLessThanOrEqual(14400);
        expect(computeFee(t, units) <= available).toBe(true);
        if (units < 14400) expect(computeFee(t, units + 1) > available).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  test('postpaid always gets the cap', () => {
    fc.assert(
      fc.property(fc.option(smallTerms), fc.bigInt(), fc.integer({ min: 0, max: 100_000 }), (t, available, cap) => {
        expect(maxAvailableUnits(t, available, 'POSTPAID', cap)).toBe(cap);
      }),
    );
  });

  test('canAffordStart: connect fee plus one increment at the rate', () => {
    fc.assert(
      fc.property(smallTerms, fc.bigInt({ min: -10n, max: 1500n }), (t, available) => {
        const step = t.rate_increment === 0 ? 1 : t.rate_increment;
        const need = BigInt(t.connect_fee) + BigInt(Math.ceil((t.rate * step) / 60));
        expect(canAffordStart(t, available)).toBe(available >= need);
      }),
      { numRuns: 1000 },
    );
  });

  test('callDurationSeconds rounds any started second up', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4e12 }), fc.integer({ min: -1e7, max: 1e9 }), (begin, ms) => {
        const expected = ms <= 0 ? 0 : Math.ceil(ms / 1000);
        expect(callDurationSeconds(new Date(begin), new Date(begin + ms))).toBe(expected);
      }),
      { numRuns: 1000 },
    );
  });

  test('availableBalance subtracts each entry rated to its end or to now', () => {
    const entryArb = fc.record({
      rate: fc.option(smallTerms),
      begin: fc.integer({ min: 0, max: 600_000 }),
      lengthMs: fc.option(fc.integer({ min: -5_000, max: 600_000 })),
    });
    fc.assert(
      fc.property(
        fc.bigInt({ min: -1000n, max: 100_000n }),
        fc.array(entryArb, { maxLength: 6 }),
        fc.integer({ min: 0, max: 1_200_000 }),
        (balance, specs, nowMs) => {
          let expected = balance;
          const running = specs.map((s, i): RunningTransaction => {
            const end = s.lengthMs === null ? null : new Date(T0 + s.begin + s.lengthMs);
            const stopAt = end ? end.getTime() : T0 + nowMs;
            const ms = stopAt - (T0 + s.begin);
            if (s.rate) expected -= feeRef(s.rate, ms <= 0 ? 0 : Math.ceil(ms / 1000));
            return {
              transaction_tag: `t${i}`,
              id: `entry-t${i}`,
              origin_account_tag: 'caller',
              call_id: `caller/t${i}`,
              source: '1',
              destination: '2',
              carrier_ip: '',
              rate: s.rate && { ...s.rate, pricelist_tag: 'p', carrier_tag: 'c', prefix: '' },
              in_progress: end === null,
              inbound: s.rate === null,
              timestamp_begin: new Date(T0 + s.begin),
              timestamp_end: end,
            };
          });
          expect(availableBalance(balance, running, new Date(T0 + nowMs))).toBe(expected);
        },
      ),
      { numRuns: 1000 },
    );
  });

  test('route equals a scan over all rates', () => {
    fc.assert(
      fc.property(ratesArb, carriersArb, queryArb, (rates, carriers, query) => {
        const index = RatingIndex.build(rates, carriers);
        const got = index.route(query).map((c): Candidate => [c.carrier.carrier_tag, c.rate.id]);
        expect(got).toEqual(routeRef(rates, carriers, query));
        expect(index.bestRate(query)?.rate.id ?? null).toBe(got[0]?.[1] ?? null);
      }),
      { numRuns: 3000 },
    );
  });
});
