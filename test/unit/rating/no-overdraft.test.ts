import fc from 'fast-check';
import type { RateTerms } from '../../../src/shared/domain/types';
import {
  callDurationSeconds,
  computeFee,
  DEFAULT_HEADROOM_SECONDS,
  maxAvailableUnits,
  MAX_UNITS_CAP,
} from '../../../src/shared/domain/rating';

/**
 * The no-overdraft rule (docs/AGENT.md, docs/DESIGN.md section 4): a proxy that cuts a prepaid call
 * at `max_available_units` with a timer of 1 s granularity, and stamps the end up to a second later
 * (its own latency, or the agent's when the agent stamps it), never makes the call cost more than the
 * available balance. So a cut anywhere in [units, units + headroom) seconds, billed per started
 * second, costs at most the available balance.
 */
const termsArb: fc.Arbitrary<RateTerms> = fc.record({
  connect_fee: fc.integer({ min: 0, max: 500 }),
  rate: fc.integer({ min: 0, max: 100_000 }),
  rate_increment: fc.constantFrom(0, 1, 6, 10, 30, 60),
  interval_start: fc.constantFrom(0, 0, 1, 5, 30, 60),
});

const at = (ms: number) => new Date(Date.UTC(2026, 10, 23, 12) + ms);

describe('no overdraft: a call cut at max_available_units by a 1 s timer costs at most the available balance', () => {
  test('the issue-11 case: balance 3 at 60/min in 1 s steps is granted 1 s, so a cut at 1.999 s costs 2 and one at 2.999 s costs 3', () => {
    const t: RateTerms = { connect_fee: 0, rate: 60, rate_increment: 1, interval_start: 0 };
    expect(maxAvailableUnits(t, 3n, 'PREPAID', MAX_UNITS_CAP, DEFAULT_HEADROOM_SECONDS)).toBe(1);
    expect(computeFee(t, callDurationSeconds(at(0), at(2999)))).toBe(3n);
  });

  test('headroom is 2 s by default (1 s timer granularity plus up to 1 s until the end is stamped)', () => {
    expect(DEFAULT_HEADROOM_SECONDS).toBe(2);
  });

  test('property: any cut in [units, units + headroom) seconds, stamped to the millisecond, costs <= available', () => {
    fc.assert(
      fc.property(
        termsArb,
        fc.bigInt({ min: 0n, max: 2_000_000n }),
        fc.integer({ min: 0, max: 4 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (terms, available, headroom, where) => {
          const units = maxAvailableUnits(terms, available, 'PREPAID', MAX_UNITS_CAP, headroom);
          fc.pre(units > 0); // 0 is a refusal: authorization answers BALANCE_INSUFFICIENT
          // The latest the call can end: just under units + headroom seconds after it began.
          const cutMs = Math.floor((units + headroom * where) * 1000);
          const lastMs = (units + headroom) * 1000 - 1;
          for (const ms of [units * 1000, cutMs, lastMs]) {
            expect(computeFee(terms, callDurationSeconds(at(0), at(ms)))).toBeLessThanOrEqual(available);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  test('property: the grant is the largest that keeps the rule (one more second could overdraw), unless capped', () => {
    fc.assert(
      fc.property(termsArb, fc.bigInt({ min: 0n, max: 2_000_000n }), fc.integer({ min: 0, max: 4 }), (terms, available, headroom) => {
        const units = maxAvailableUnits(terms, available, 'PREPAID', MAX_UNITS_CAP, headroom);
        if (units === MAX_UNITS_CAP) return;
        expect(computeFee(terms, units + 1 + headroom)).toBeGreaterThan(available);
      }),
      { numRuns: 3000 },
    );
  });

  test('headroom 0 keeps the plain definition: the longest duration whose fee fits', () => {
    fc.assert(
      fc.property(termsArb, fc.bigInt({ min: 0n, max: 200_000n }), (terms, available) => {
        const units = maxAvailableUnits(terms, available, 'PREPAID', MAX_UNITS_CAP, 0);
        expect(units).toBe(maxAvailableUnits(terms, available, 'PREPAID'));
        expect(computeFee(terms, units)).toBeLessThanOrEqual(available);
        if (units < MAX_UNITS_CAP) expect(computeFee(terms, units + 1)).toBeGreaterThan(available);
      }),
      { numRuns: 1000 },
    );
  });

  test('postpaid accounts still get the cap whatever the headroom', () => {
    expect(maxAvailableUnits({ connect_fee: 0, rate: 60, rate_increment: 1, interval_start: 0 }, -10n, 'POSTPAID', MAX_UNITS_CAP, 2)).toBe(
      MAX_UNITS_CAP,
    );
  });
});
