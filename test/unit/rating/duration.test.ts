import { callDurationSeconds } from '../../../src/shared/domain/rating';

const T0 = Date.UTC(2024, 0, 1, 12, 0, 0);

describe('callDurationSeconds', () => {
  test.each([
    ['same instant', 0, 0],
    ['end 1 ms before begin', -1, 0],
    ['end an hour before begin', -3_600_000, 0],
    ['1 ms counts as a second', 1, 1],
    ['999 ms', 999, 1],
    ['exactly 1 s', 1000, 1],
    ['1001 ms rounds up', 1001, 2],
    ['38 s (spec sample)', 38_000, 38],
    ['38.001 s', 38_001, 39],
    ['4 h', 14_400_000, 14_400],
    ['4 h + 1 ms', 14_400_001, 14_401],
  ])('%s: %d ms -> %d s', (_name, ms, expected) => {
    expect(callDurationSeconds(new Date(T0), new Date(T0 + ms))).toBe(expected);
  });

  test('invalid dates are rejected rather than rated as free', () => {
    expect(() => callDurationSeconds(new Date('nope'), new Date(T0))).toThrow(RangeError);
    expect(() => callDurationSeconds(new Date(T0), new Date(NaN))).toThrow(RangeError);
  });
});
