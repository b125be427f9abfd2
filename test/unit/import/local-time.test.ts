import { UnknownZone, Zone } from '../../../src/shared/domain/imports/cdr/local-time';
import { choose, instantsOf, readTime, type Instants } from '../../../src/shared/domain/imports/cdr/times';

/**
 * Local wall-clock times of switches (Asterisk, FreeSWITCH) turned into instants with Intl's zone
 * data: an ordinary time is one instant, a time in the hour the clocks went back over is two, a time
 * in the hour they skipped is none (docs/IMPORTS.md, "Local times").
 */
const local = (s: string) => Date.parse(`${s}Z`);
const iso = (ms: number) => new Date(ms).toISOString();

describe('local times in an IANA zone', () => {
  const berlin = new Zone('Europe/Berlin');

  it('reads an ordinary winter and summer time as one instant', () => {
    expect(berlin.instants(local('2026-01-15T10:00:00')).map(iso)).toEqual(['2026-01-15T09:00:00.000Z']);
    expect(berlin.instants(local('2026-07-15T10:00:00.250')).map(iso)).toEqual(['2026-07-15T08:00:00.250Z']);
  });

  it('finds no instant in the hour the clocks skip (summer time starts at 02:00 on 2026-03-29)', () => {
    expect(berlin.instants(local('2026-03-29T01:59:59')).map(iso)).toEqual(['2026-03-29T00:59:59.000Z']);
    expect(berlin.instants(local('2026-03-29T02:00:00'))).toEqual([]);
    expect(berlin.instants(local('2026-03-29T02:59:59'))).toEqual([]);
    expect(berlin.instants(local('2026-03-29T03:00:00')).map(iso)).toEqual(['2026-03-29T01:00:00.000Z']);
  });

  it('finds both instants in the hour the clocks go back over (03:00 becomes 02:00 on 2026-10-25), earlier first', () => {
    expect(berlin.instants(local('2026-10-25T01:59:59')).map(iso)).toEqual(['2026-10-24T23:59:59.000Z']);
    expect(berlin.instants(local('2026-10-25T02:00:00')).map(iso)).toEqual(['2026-10-25T00:00:00.000Z', '2026-10-25T01:00:00.000Z']);
    expect(berlin.instants(local('2026-10-25T02:59:59')).map(iso)).toEqual(['2026-10-25T00:59:59.000Z', '2026-10-25T01:59:59.000Z']);
    expect(berlin.instants(local('2026-10-25T03:00:00')).map(iso)).toEqual(['2026-10-25T02:00:00.000Z']);
  });

  it('handles other zones: New York, a half-hour change (Lord Howe Island), and UTC', () => {
    const ny = new Zone('America/New_York');
    expect(ny.instants(local('2026-03-08T02:30:00'))).toEqual([]);
    expect(ny.instants(local('2026-11-01T01:30:00')).map(iso)).toEqual(['2026-11-01T05:30:00.000Z', '2026-11-01T06:30:00.000Z']);
    // Lord Howe moves its clocks by 30 minutes: 02:00 becomes 02:30 in October, 02:00 becomes 01:30 in April.
    const lordHowe = new Zone('Australia/Lord_Howe');
    expect(lordHowe.instants(local('2026-10-04T02:15:00'))).toEqual([]);
    expect(lordHowe.instants(local('2026-10-04T02:30:00'))).toHaveLength(1);
    expect(lordHowe.instants(local('2026-04-05T01:45:00'))).toHaveLength(2);
    expect(lordHowe.instants(local('2026-04-05T01:29:00'))).toHaveLength(1);
    expect(new Zone('UTC').instants(local('2026-03-29T02:30:00')).map(iso)).toEqual(['2026-03-29T02:30:00.000Z']);
  });

  it('refuses a name that is not a time zone', () => {
    expect(() => new Zone('Europe/Atlantis')).toThrow(UnknownZone);
    expect(() => new Zone('CEST+2')).toThrow(/not a time zone name/);
  });
});

describe('time cells', () => {
  const berlin = new Zone('Europe/Berlin');

  it('reads datetimes, an offset written in the value winning over the zone', () => {
    expect(readTime('2026-01-15 10:00:00', 'datetime', berlin)).toEqual(Date.parse('2026-01-15T09:00:00Z'));
    expect(readTime('2026-01-15T10:00:00.5', 'datetime', berlin)).toEqual(Date.parse('2026-01-15T09:00:00.500Z'));
    expect(readTime('2026-01-15 10:00:00+05:30', 'datetime', berlin)).toEqual(Date.parse('2026-01-15T04:30:00Z'));
    expect(readTime('2026-01-15 10:00:00Z', 'iso', null)).toEqual(Date.parse('2026-01-15T10:00:00Z'));
    expect(readTime('2026-01-15 10:00:00', 'iso', null)).toMatch(/offset/);
    expect(readTime('2026-02-30 10:00:00', 'datetime', berlin)).toBe('is not a date and time that exists');
    expect(readTime('2026-10-25 02:30:00', 'datetime', berlin)).toEqual([
      Date.parse('2026-10-25T00:30:00Z'),
      Date.parse('2026-10-25T01:30:00Z'),
    ]);
    expect(readTime('2026-03-29 02:30:00', 'datetime', berlin)).toBe(
      '2026-03-29 02:30:00 does not exist in Europe/Berlin (the clocks skipped it)',
    );
  });

  it('reads epoch seconds (with up to 6 decimals, exactly), milliseconds and microseconds', () => {
    expect(readTime('1768471200', 'epoch', null)).toBe(1768471200000);
    expect(readTime('1768471200.123456', 'epoch', null)).toBe(1768471200123);
    expect(readTime('1768471200.0005', 'epoch', null)).toBe(1768471200001);
    expect(readTime('1768471200123', 'epoch_ms', null)).toBe(1768471200123);
    expect(readTime('1768471200123456', 'epoch_us', null)).toBe(1768471200123);
    expect(readTime('1768471200123', 'epoch', null)).toBe('must be between 2000-01-01 and 2100-12-31');
    expect(readTime('2026-01-15', 'epoch', null)).toBe('must be epoch seconds');
  });

  it('chooses the reading of a call in a repeated hour that makes sense of its times', () => {
    const h = 3_600_000;
    // Answered at 02:50 (either), ended at 02:05 (either), billed 15 minutes: answered in the first 02:50, ended in the second 02:05.
    const answer = [0, h];
    const end = [-45 * 60_000 + h, -45 * 60_000 + 2 * h];
    expect(choose(null, answer, end, 15 * 60_000)).toEqual([0, 0, 0]);
    expect(choose(null, answer, end, null)).toEqual([0, 0, 0]);
    // Ended at 03:10 (once): answered in the second 02:50.
    expect(choose(null, answer, [h + 20 * 60_000], 20 * 60_000)).toEqual([0, 1, 0]);
    // Wholly inside the repeated hour, both readings agree: the earlier.
    expect(choose([0, h], [1000, h + 1000], [61_000, h + 61_000], 60_000)).toEqual([0, 0, 0]);
  });

  it('takes the latest reading of a repeated set-up time that is not after the answer', () => {
    const at = (s: string) => instantsOf(readTime(s, 'datetime', berlin) as Instants);
    // Set up at 02:29, answered at 02:30, ended at 03:10, billed 40 minutes: answered in the second 02:30
    // (01:30Z), so set up in the second 02:29 (01:29Z), not in the first (a set-up of 61 minutes).
    expect(choose(at('2026-10-25 02:29:00'), at('2026-10-25 02:30:00'), at('2026-10-25 03:10:00'), 2_400_000)).toEqual([1, 1, 0]);
    // Answered in the first 02:30: the second 02:29 would be after it.
    expect(choose(at('2026-10-25 02:29:00'), at('2026-10-25 02:30:00'), at('2026-10-25 02:40:00'), 600_000)).toEqual([0, 0, 0]);
  });
});
