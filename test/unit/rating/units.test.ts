import type { AccountType, RateTerms } from '../../../src/shared/domain/types';
import { canAffordStart, computeFee, maxAvailableUnits, MAX_UNITS_CAP } from '../../../src/shared/domain/rating';

const terms = (connect_fee: number, rate: number, rate_increment: number, interval_start: number): RateTerms => ({
  connect_fee,
  rate,
  rate_increment,
  interval_start,
});

const SAMPLE = terms(0, 20, 60, 0);

describe('maxAvailableUnits', () => {
  test('default cap is 4 hours', () => {
    expect(MAX_UNITS_CAP).toBe(14400);
  });

  test.each<[string, RateTerms | null, bigint, AccountType, number | undefined, number]>([
    ['prepaid, 100 at 20 per 60 s step', SAMPLE, 100n, 'PREPAID', undefined, 300],
    ['prepaid, exact boundary fee == available', SAMPLE, 20n, 'PREPAID', undefined, 60],
    ['prepaid, just under the second step', SAMPLE, 39n, 'PREPAID', undefined, 60],
    ['prepaid, exact boundary of the second step', SAMPLE, 40n, 'PREPAID', undefined, 120],
    ['prepaid, cannot pay the first step', SAMPLE, 19n, 'PREPAID', undefined, 0],
    ['prepaid, zero balance', SAMPLE, 0n, 'PREPAID', undefined, 0],
    ['prepaid, negative balance', SAMPLE, -100n, 'PREPAID', undefined, 0],
    ['connect fee exactly available: no second fits', terms(10, 60, 1, 0), 10n, 'PREPAID', undefined, 0],
    ['connect fee plus one second', terms(10, 60, 1, 0), 11n, 'PREPAID', undefined, 1],
    ['per second after connect fee', terms(10, 60, 1, 0), 110n, 'PREPAID', undefined, 100],
    ['interval_start seconds cost only the connect fee', terms(10, 60, 1, 30), 10n, 'PREPAID', undefined, 30],
    ['past interval_start', terms(10, 60, 1, 30), 15n, 'PREPAID', undefined, 35],
    ['capped at 14400', SAMPLE, 1_000_000n, 'PREPAID', undefined, 14400],
    ['exactly the fee of the cap', SAMPLE, 4800n, 'PREPAID', undefined, 14400],
    ['one short of the fee of the cap', SAMPLE, 4799n, 'PREPAID', undefined, 14340],
    ['custom cap', SAMPLE, 1_000_000n, 'PREPAID', 100, 100],
    ['cap 0', SAMPLE, 1_000_000n, 'PREPAID', 0, 0],
    ['free rate gets the cap', terms(0, 0, 1, 0), 0n, 'PREPAID', undefined, 14400],
    ['free rate with affordable connect fee', terms(5, 0, 1, 0), 5n, 'PREPAID', undefined, 14400],
    ['free rate with unaffordable connect fee', terms(5, 0, 1, 0), 4n, 'PREPAID', undefined, 0],
    ['postpaid gets the cap', SAMPLE, 0n, 'POSTPAID', undefined, 14400],
    ['postpaid with a negative balance gets the cap', SAMPLE, -5000n, 'POSTPAID', undefined, 14400],
    ['postpaid with a custom cap', SAMPLE, 0n, 'POSTPAID', 60, 60],
    ['no rate (nothing charged)', null, 0n, 'PREPAID', undefined, 14400],
    ['no rate, negative balance', null, -1n, 'PREPAID', undefined, 0],
    ['huge rate, balance beyond 2^53', terms(0, Number.MAX_SAFE_INTEGER, 1, 0), 9157319242320008n, 'PREPAID', undefined, 61],
    ['huge rate, one unit short', terms(0, Number.MAX_SAFE_INTEGER, 1, 0), 9157319242320007n, 'PREPAID', undefined, 60],
  ])('%s', (_name, t, available, type, cap, expected) => {
    const units = cap === undefined ? maxAvailableUnits(t, available, type) : maxAvailableUnits(t, available, type, cap);
    expect(units).toBe(expected);
    if (t !== null && type === 'PREPAID') {
      // The answer fits and one more second does not (unless at the cap).
      expect(computeFee(t, units) <= available || units === 0).toBe(true);
      if (units < (cap ?? MAX_UNITS_CAP)) expect(computeFee(t, units + 1) > available).toBe(true);
    }
  });

  test.each([-1, 1.5, NaN])('rejects cap %p', (cap) => {
    expect(() => maxAvailableUnits(SAMPLE, 100n, 'PREPAID', cap)).toThrow(RangeError);
  });
});

describe('canAffordStart', () => {
  test.each<[string, RateTerms | null, bigint, boolean]>([
    ['one 60 s step at 20: exactly 20', SAMPLE, 20n, true],
    ['one 60 s step at 20: 19', SAMPLE, 19n, false],
    ['connect fee plus one second: exactly', terms(10, 60, 1, 0), 11n, true],
    ['connect fee alone is not enough', terms(10, 60, 1, 0), 10n, false],
    ['interval_start does not lower the bar', terms(10, 60, 1, 30), 10n, false],
    ['interval_start: connect plus one increment', terms(10, 60, 1, 30), 11n, true],
    ['increment 0 means one second', terms(0, 60, 0, 0), 1n, true],
    ['increment 0 means one second, nothing available', terms(0, 60, 0, 0), 0n, false],
    ['free rate, connect fee affordable', terms(10, 0, 60, 0), 10n, true],
    ['free rate, connect fee not affordable', terms(10, 0, 60, 0), 9n, false],
    ['no rate, zero balance', null, 0n, true],
    ['no rate, negative balance', null, -1n, false],
    ['negative available', SAMPLE, -1n, false],
  ])('%s', (_name, t, available, expected) => {
    expect(canAffordStart(t, available)).toBe(expected);
  });
});
