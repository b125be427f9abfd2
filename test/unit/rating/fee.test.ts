import type { RateTerms } from '../../../src/shared/domain/types';
import { computeFee } from '../../../src/shared/domain/rating';

const terms = (connect_fee: number, rate: number, rate_increment: number, interval_start: number): RateTerms => ({
  connect_fee,
  rate,
  rate_increment,
  interval_start,
});

const MAX = Number.MAX_SAFE_INTEGER; // 9007199254740991

describe('computeFee', () => {
  test.each<[string, RateTerms, number, bigint]>([
    ['spec sample: 38 s at 20/min, 60 s step', terms(0, 20, 60, 0), 38, 20n],
    ['exactly one step', terms(0, 20, 60, 0), 60, 20n],
    ['one second into the second step', terms(0, 20, 60, 0), 61, 40n],
    ['1 s bills a full 60 s step', terms(0, 20, 60, 0), 1, 20n],
    ['connect fee added', terms(15, 20, 60, 0), 38, 35n],
    ['connect fee only when rate is 0', terms(15, 0, 60, 0), 500, 15n],
    ['within interval_start: connect fee only', terms(5, 60, 1, 30), 30, 5n],
    ['1 s past interval_start', terms(5, 60, 1, 30), 31, 6n],
    ['interval_start with 60 s step', terms(10, 30, 60, 30), 20, 10n],
    ['interval_start with 60 s step, past it', terms(10, 30, 60, 30), 31, 40n],
    ['interval_start with 60 s step, next step', terms(10, 30, 60, 30), 91, 70n],
    ['increment 0 means per second', terms(0, 7, 0, 0), 10, 2n], // ceil(70/60)
    ['increment 1 is per second', terms(0, 7, 1, 0), 10, 2n],
    ['increment 1, exact minute', terms(0, 7, 1, 0), 60, 7n],
    ['per-second rounding up of a fraction', terms(0, 1, 1, 0), 1, 1n],
    ['30 s step', terms(0, 12, 30, 0), 31, 12n], // 60 s charged
    ['0 duration costs nothing, not even the connect fee', terms(100, 20, 60, 0), 0, 0n],
    ['0 duration with interval_start', terms(100, 20, 60, 30), 0, 0n],
    ['huge rate, per second: exact beyond 2^53', terms(0, MAX, 1, 0), 61, 9157319242320008n],
    ['huge rate, 4 h', terms(0, MAX, 60, 0), 14400, 2161727821137837840n],
    ['huge rate and connect fee', terms(9007199254740000, MAX, 1, 0), 3601, 549589274526778477n],
  ])('%s', (_name, t, duration, expected) => {
    expect(computeFee(t, duration)).toBe(expected);
  });

  test('big results are exact where float arithmetic is not', () => {
    const fee = computeFee(terms(0, MAX, 1, 0), 67);
    expect(fee).toBe(10058039167794107n); // ceil(9007199254740991 * 67 / 60)
    expect(BigInt(Math.ceil((MAX * 67) / 60))).not.toBe(fee);
    expect(computeFee(terms(0, MAX, 1, 0), 14399)).toBe(2161577701150258824n);
  });

  test('missing optional terms in a stored document take their defaults', () => {
    const stored = { rate: 7 } as unknown as RateTerms;
    expect(computeFee(stored, 10)).toBe(2n);
    const nulls = { rate: 20, connect_fee: null, rate_increment: null, interval_start: null };
    expect(computeFee(nulls as unknown as RateTerms, 38)).toBe(13n); // ceil(20*38/60)
  });

  test.each<[string, RateTerms, number]>([
    ['negative duration', terms(0, 20, 60, 0), -1],
    ['fractional duration', terms(0, 20, 60, 0), 1.5],
    ['NaN duration', terms(0, 20, 60, 0), NaN],
    ['negative rate', terms(0, -20, 60, 0), 10],
    ['fractional rate', terms(0, 2.5, 60, 0), 10],
    ['negative connect fee', terms(-1, 20, 60, 0), 10],
    ['negative increment', terms(0, 20, -60, 0), 10],
    ['negative interval_start', terms(0, 20, 60, -5), 10],
    ['missing rate', { connect_fee: 0 } as unknown as RateTerms, 10],
  ])('rejects %s', (_name, t, duration) => {
    expect(() => computeFee(t, duration)).toThrow(RangeError);
  });
});
