import { EPOCH_MAX_SECONDS, EPOCH_MIN_SECONDS } from '../../validation/timestamp';
import type { Zone } from './local-time';
import type { TimeFormat } from './mapping';

/**
 * A CDR's time cells as instants. A local time (format `datetime`, no offset written) may name two
 * instants in the hour the clocks went back over, or none in the hour they skipped: `readTime` returns
 * the candidates, `choose` picks the one reading of the call's times that makes sense (docs/IMPORTS.md,
 * "Local times"). Every row of an import goes through here two or three times, so the common case (one
 * instant) allocates nothing: a number.
 */

/** One instant (ms), or two (ascending) in a repeated hour. */
export type Instants = number | readonly [number, number];
/** Instants, or why the cell is not a time (a string). */
export type Read = Instants | string;

export const instantsOf = (i: Instants): readonly number[] => (typeof i === 'number' ? [i] : i);

// YYYY-MM-DD HH:MM:SS (or T), up to 6 decimals, then optionally Z or an offset (+HH:MM, +HHMM, +HH).
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(Z|[+-]\d{2}(?::?\d{2})?)?$/;
const DECIMAL = /^(\d{1,16})(?:\.(\d{1,6}))?$/;

/** Decimal digits to an integer count of 1/1000 of their unit, rounded half up, by integer arithmetic (no binary fraction). */
function thousandths(whole: string, fraction: string): number {
  const digits = fraction.padEnd(4, '0');
  return Number(whole) * 1000 + Number(digits.slice(0, 3)) + (Number(digits[3]) >= 5 ? 1 : 0);
}

/** A duration in seconds (decimals allowed) or milliseconds as milliseconds, or null. */
export function durationMs(value: string, unit: 'seconds' | 'ms'): number | null {
  const m = DECIMAL.exec(value);
  if (!m) return null;
  if (unit === 'seconds') return thousandths(m[1], m[2] ?? '');
  return Number(m[1]) + (m[2] !== undefined && Number(m[2][0]) >= 5 ? 1 : 0);
}

const MIN_MS = EPOCH_MIN_SECONDS * 1000;
const MAX_MS = EPOCH_MAX_SECONDS * 1000 + 999;
const RANGE = 'must be between 2000-01-01 and 2100-12-31';

function epoch(value: string, unit: 'seconds' | 'ms' | 'us'): Read {
  const m = DECIMAL.exec(value);
  if (!m) return `must be epoch ${unit === 'seconds' ? 'seconds' : unit === 'ms' ? 'milliseconds' : 'microseconds'}`;
  let ms: number;
  if (unit === 'seconds') ms = thousandths(m[1], m[2] ?? '');
  else if (unit === 'ms') ms = Number(m[1]) + (m[2] !== undefined && Number(m[2][0]) >= 5 ? 1 : 0);
  else ms = Math.floor(Number(m[1]) / 1000) + (Number(m[1]) % 1000 >= 500 ? 1 : 0);
  return ms < MIN_MS || ms > MAX_MS ? RANGE : ms;
}

function offsetMs(text: string): number {
  if (text === 'Z') return 0;
  const sign = text[0] === '-' ? -1 : 1;
  const digits = text.slice(1).replace(':', '');
  return sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0')) * 60_000;
}

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const daysIn = (y: number, m: number) => (m === 2 && y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : DAYS[m - 1]);

/** Digit at `i` (0-9), or -1. */
const digit = (s: string, i: number) => {
  const c = s.charCodeAt(i) - 48;
  return c >= 0 && c <= 9 ? c : -1;
};

/**
 * `YYYY-MM-DD HH:MM:SS` (what Asterisk and FreeSWITCH write) read without a regular expression: the
 * local time as if UTC (ms), or NaN when the text has another shape.
 */
function plainLocal(s: string): number {
  if (s.length !== 19 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return NaN;
  const sep = s.charCodeAt(10);
  if (sep !== 32 && sep !== 84) return NaN;
  let y = 0;
  for (let i = 0; i < 4; i++) {
    const d = digit(s, i);
    if (d < 0) return NaN;
    y = y * 10 + d;
  }
  const two = (i: number) => {
    const a = digit(s, i);
    const b = digit(s, i + 1);
    return a < 0 || b < 0 ? -1 : a * 10 + b;
  };
  const mo = two(5);
  const d = two(8);
  const h = two(11);
  const mi = two(14);
  const sec = two(17);
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59) return NaN;
  return Date.UTC(y, mo - 1, d, h, mi, sec);
}

function local(value: string, zone: Zone, wall: number): Read {
  const at = zone.instants(wall);
  if (at.length === 0) return `${value} does not exist in ${zone.name} (the clocks skipped it)`;
  const first = at[0];
  if (first < MIN_MS || at[at.length - 1] > MAX_MS) return RANGE;
  return at.length === 1 ? first : [first, at[1]];
}

/** One time cell (not empty) in the mapping's format; `zone` for local times. */
export function readTime(value: string, format: TimeFormat, zone: Zone | null): Read {
  switch (format) {
    case 'epoch':
      return epoch(value, 'seconds');
    case 'epoch_ms':
      return epoch(value, 'ms');
    case 'epoch_us':
      return epoch(value, 'us');
  }
  if (format === 'datetime') {
    const wall = plainLocal(value);
    if (!Number.isNaN(wall)) return local(value, zone!, wall);
  }
  const m = DATETIME.exec(value);
  if (!m)
    return format === 'iso'
      ? 'must be a datetime with its offset, like 2026-01-31T12:00:00+01:00 or ...Z'
      : 'must be a datetime like 2026-01-31 12:00:00';
  const [, y, mo, d, h, mi, s, frac, offset] = m;
  if (
    Number(mo) < 1 ||
    Number(mo) > 12 ||
    Number(d) < 1 ||
    Number(d) > daysIn(Number(y), Number(mo)) ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    Number(s) > 59
  )
    return 'is not a date and time that exists';
  const wall = Date.UTC(
    Number(y),
    Number(mo) - 1,
    Number(d),
    Number(h),
    Number(mi),
    Number(s),
    frac ? Math.floor(Number(frac.padEnd(6, '0')) / 1000) : 0,
  );
  if (offset !== undefined) {
    const at = wall - offsetMs(offset);
    return at < MIN_MS || at > MAX_MS ? RANGE : at;
  }
  if (format === 'iso') return 'must give its offset (Z or +HH:MM): time.format is iso';
  return local(value, zone!, wall);
}

/**
 * The reading of a call's times to keep when one of them is a local time in a repeated hour: the
 * combination (earliest first) in which the call starts before it is answered, is answered before it
 * ends, and, when both the end and the billable time are written, ends closest to answer + billable
 * time; of the start's readings, the latest that is not after the answer. A call whose times all fall
 * in the repeated hour and agree either way gets the earlier reading: its duration, hence its fee, is
 * the same either way. Returns indexes into each list.
 */
export function choose(
  start: readonly number[] | null,
  answer: readonly number[],
  end: readonly number[] | null,
  billMs: number | null,
): [number, number, number] {
  const starts = start ?? [NaN];
  const ends = end ?? [NaN];
  let best: [number, number, number] = [0, 0, 0];
  let bestScore = Infinity;
  for (let a = 0; a < answer.length; a++) {
    // The start does not change the score: the first reading tried wins, so the latest goes first. Set up
    // at 02:29 and answered in the second 02:30, a call was set up in the second 02:29, not an hour before.
    for (let s = starts.length - 1; s >= 0; s--) {
      if (start && starts[s] > answer[a]) continue;
      for (let e = 0; e < ends.length; e++) {
        if (end && ends[e] < answer[a]) continue;
        const score = end && billMs !== null ? Math.abs(ends[e] - (answer[a] + billMs)) : 0;
        if (score < bestScore) {
          best = [s, a, e];
          bestScore = score;
        }
      }
    }
  }
  return best;
}
