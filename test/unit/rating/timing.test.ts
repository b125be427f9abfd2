import fc from 'fast-check';
import {
  edgesOf,
  localTime,
  nextBoundary,
  specificity,
  timingMatches,
  timingProblem,
  type RateTiming,
} from '../../../src/shared/domain/rating/timing';

/** Issue 34: when a rate applies, on its pricelist's clock. */
const at = (iso: string) => Date.parse(iso);
const timing = (t: Partial<RateTiming>): RateTiming => ({ days: null, start: null, end: null, holidays: null, ...t });
const ROME = 'Europe/Rome';

describe('rate timings', () => {
  const peak = timing({ days: [1, 2, 3, 4, 5], start: '08:00:00', end: '18:00:00' });
  const night = timing({ start: '22:00:00', end: '06:00:00' });
  const fridayNight = timing({ days: [5], start: '22:00:00', end: '06:00:00' });

  it('reads the wall clock of the time zone', () => {
    // 2026-07-01 is a Wednesday; Rome is UTC+2 in summer.
    expect(localTime(at('2026-07-01T06:30:00Z'), ROME)).toEqual({ date: '2026-07-01', weekday: 3, secondOfDay: 8 * 3600 + 30 * 60 });
    expect(timingMatches(peak, at('2026-07-01T06:30:00Z'), ROME)).toBe(true);
    expect(timingMatches(peak, at('2026-07-01T06:30:00Z'), 'UTC')).toBe(false);
    expect(timingMatches(peak, at('2026-07-01T16:00:00Z'), ROME)).toBe(false); // 18:00 local: end exclusive
    expect(timingMatches(peak, at('2026-07-04T10:00:00Z'), ROME)).toBe(false); // Saturday
  });

  it('a window that wraps past midnight belongs to the day it starts on', () => {
    expect(timingMatches(night, at('2026-07-01T21:00:00Z'), ROME)).toBe(true); // 23:00
    expect(timingMatches(night, at('2026-07-02T03:59:59Z'), ROME)).toBe(true); // 05:59:59
    expect(timingMatches(night, at('2026-07-02T04:00:00Z'), ROME)).toBe(false); // 06:00
    // Friday 2026-07-03 22:00 to Saturday 06:00: Saturday 05:00 is Friday's night, Friday 05:00 is Thursday's.
    expect(timingMatches(fridayNight, at('2026-07-04T03:00:00Z'), ROME)).toBe(true);
    expect(timingMatches(fridayNight, at('2026-07-03T03:00:00Z'), ROME)).toBe(false);
  });

  it('holidays: only on them, or never on them, read on the day the window starts', () => {
    const holidays = new Set(['2026-12-25']);
    const onHolidays = timing({ holidays: 'only' });
    const notOnHolidays = timing({ days: [5], holidays: 'exclude' });
    expect(timingMatches(onHolidays, at('2026-12-25T12:00:00Z'), ROME, holidays)).toBe(true);
    expect(timingMatches(onHolidays, at('2026-12-24T12:00:00Z'), ROME, holidays)).toBe(false);
    expect(timingMatches(notOnHolidays, at('2026-12-25T12:00:00Z'), ROME, holidays)).toBe(false); // a Friday, but a holiday
    expect(timingMatches(notOnHolidays, at('2026-12-18T12:00:00Z'), ROME, holidays)).toBe(true);
    // Christmas night's window runs into the 26th: still Christmas's.
    const holidayNight = timing({ start: '22:00:00', end: '06:00:00', holidays: 'only' });
    expect(timingMatches(holidayNight, at('2026-12-26T03:00:00Z'), ROME, holidays)).toBe(true);
  });

  it('specificity: holiday over weekday over a window every day over no timing', () => {
    expect([timing({ holidays: 'only' }), timing({ days: [1] }), night, null].map(specificity)).toEqual([6, 4, 3, 1]);
  });

  it('refuses malformed timings with the field named', () => {
    expect(timingProblem(peak)).toBeNull();
    expect(timingProblem(timing({ days: [0] }))).toMatch(/^days:/);
    expect(timingProblem(timing({ days: [] }))).toMatch(/^days:/);
    expect(timingProblem(timing({ start: '08:00:00' }))).toMatch(/^start and end/);
    expect(timingProblem(timing({ start: '24:00:00', end: '08:00:00' }))).toMatch(/^start:/);
    expect(timingProblem(timing({ start: '08:00:00', end: '08:00:00' }))).toMatch(/empty window/);
  });

  describe('boundaries', () => {
    const edges = edgesOf([peak, night]);

    it('are the wall clock reaching an edge (08:00, 18:00, 22:00, 06:00, midnight)', () => {
      expect(edges).toEqual([0, 6 * 3600, 8 * 3600, 18 * 3600, 22 * 3600]);
      expect(new Date(nextBoundary(at('2026-07-01T05:00:00Z'), ROME, edges)).toISOString()).toBe('2026-07-01T06:00:00.000Z'); // 07:00 -> 08:00
      expect(new Date(nextBoundary(at('2026-07-01T06:00:00Z'), ROME, edges)).toISOString()).toBe('2026-07-01T16:00:00.000Z'); // 08:00 -> 18:00
      expect(new Date(nextBoundary(at('2026-07-01T21:00:00Z'), ROME, edges)).toISOString()).toBe('2026-07-01T22:00:00.000Z'); // 23:00 -> midnight
    });

    it('are exact across DST changes: the spring gap and the autumn repeat', () => {
      // 2026-03-29 in Rome: 02:00 CET becomes 03:00 CEST (01:00Z). An edge at 02:30 does not exist that night.
      const gap = edgesOf([timing({ start: '02:30:00', end: '05:00:00' })]);
      const b = nextBoundary(at('2026-03-29T00:30:00Z'), ROME, gap); // 01:30 CET
      expect(new Date(b).toISOString()).toBe('2026-03-29T01:00:00.000Z'); // the clock jumps: a boundary
      expect(localTime(b, ROME).secondOfDay).toBe(3 * 3600);
      expect(new Date(nextBoundary(b, ROME, gap)).toISOString()).toBe('2026-03-29T03:00:00.000Z'); // 05:00 CEST
      // 2026-10-25: 03:00 CEST becomes 02:00 CET (01:00Z); 02:30 happens twice.
      const repeat = edgesOf([timing({ start: '02:30:00', end: '05:00:00' })]);
      const first = nextBoundary(at('2026-10-24T23:00:00Z'), ROME, repeat); // 01:00 CEST
      expect(new Date(first).toISOString()).toBe('2026-10-25T00:30:00.000Z'); // 02:30 CEST
      const jump = nextBoundary(first, ROME, repeat);
      expect(new Date(jump).toISOString()).toBe('2026-10-25T01:00:00.000Z'); // clocks go back
      expect(new Date(nextBoundary(jump, ROME, repeat)).toISOString()).toBe('2026-10-25T01:30:00.000Z'); // 02:30 CET
    });

    it('property: whether a timing applies never changes strictly between two boundaries', () => {
      const zones = ['UTC', ROME, 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata'];
      const tod = fc
        .integer({ min: 0, max: 86399 })
        .map(
          (s) =>
            `${String(Math.floor(s / 3600)).padStart(2, '0')}:${String(Math.floor(s / 60) % 60).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`,
        );
      const arbTiming = fc
        .record({
          days: fc.option(fc.uniqueArray(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 7 }), { nil: null }),
          start: tod,
          end: tod,
          holidays: fc.constantFrom<RateTiming['holidays']>(null, 'only', 'exclude'),
        })
        .filter((t) => t.start !== t.end);
      fc.assert(
        fc.property(
          fc.constantFrom(...zones),
          arbTiming,
          fc.integer({ min: at('2026-01-01T00:00:00Z'), max: at('2027-01-01T00:00:00Z') }),
          fc.array(fc.integer({ min: 1, max: 999 }), { minLength: 3, maxLength: 3 }),
          (zone, t, from, fractions) => {
            const holidays = new Set([localTime(from, zone).date]);
            const b = nextBoundary(from, zone, edgesOf([t]));
            expect(b).toBeGreaterThan(from);
            const inside = timingMatches(t, from, zone, holidays);
            for (const f of fractions) {
              const probe = from + Math.floor(((b - from) * f) / 1000);
              if (probe < b) expect(timingMatches(t, probe, zone, holidays)).toBe(inside);
            }
          },
        ),
        { numRuns: 300 },
      );
    });
  });
});
