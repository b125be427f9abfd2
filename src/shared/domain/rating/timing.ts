/**
 * When a rate applies (issue 34: peak and off-peak prices): a rate version may carry a timing, read on
 * its pricelist's clock (an IANA time zone, UTC by default). Pure: no I/O; the holiday calendar is
 * passed in. The rules (docs/RATING.md, "Rates by time of day"):
 * - `days`: ISO weekdays, 1 Monday to 7 Sunday; null: every day.
 * - `start`/`end`: local time of day, `HH:MM:SS`, start inclusive, end exclusive; both null: the whole
 *   day. An end at or before the start wraps past midnight (`22:00:00`-`06:00:00`): the window belongs
 *   to the day it starts on, so Friday's night window runs into Saturday morning, and `days` and
 *   `holidays` are read on Friday.
 * - `holidays`: 'only' (on holiday dates only), 'exclude' (never on them), null (whatever the day).
 * - Specificity, when several versions of one rate match an instant: holiday over weekday over a window
 *   on every day over no timing, and within each a time window over the whole day (`specificity`); two
 *   of one rank, the narrower (fewer seconds a week), then by written form (`appliesBefore`).
 */
import type { RateTiming } from '../types';

export type { RateTiming };

/** A holiday calendar: local dates `YYYY-MM-DD`. */
export type Holidays = ReadonlySet<string>;

const NO_HOLIDAYS: Holidays = new Set();

/** The wall clock of an instant in a time zone. */
export interface LocalTime {
  /** `YYYY-MM-DD`. */
  date: string;
  /** ISO weekday, 1 Monday to 7 Sunday. */
  weekday: number;
  /** Seconds since local midnight (0..86399). */
  secondOfDay: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** The Intl format of a time zone; throws RangeError for a name the runtime does not know. */
function formatOf(timeZone: string): Intl.DateTimeFormat {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'short',
    });
    formats.set(timeZone, format);
  }
  return format;
}

/** Whether the runtime knows this IANA time zone name. */
export function isTimeZone(name: string): boolean {
  try {
    formatOf(name);
    return true;
  } catch {
    return false;
  }
}

const WEEKDAYS: Record<string, number> = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 };

export function localTime(at: number, timeZone: string): LocalTime {
  const parts: Record<string, string> = {};
  for (const p of formatOf(timeZone).formatToParts(new Date(at))) parts[p.type] = p.value;
  return {
    date: `${parts.year}-${parts.month}-${parts.day}`,
    weekday: WEEKDAYS[parts.weekday],
    secondOfDay: Number(parts.hour) * 3600 + Number(parts.minute) * 60 + Number(parts.second),
  };
}

/** `HH:MM:SS` (00:00:00 to 23:59:59) as seconds of the day; null when malformed. */
export function parseTimeOfDay(text: string): number | null {
  const m = /^([01]\d|2[0-3]):([0-5]\d):([0-5]\d)$/.exec(text);
  return m ? Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) : null;
}

/** What is wrong with a timing (a message naming the field), or null when it is valid. */
export function timingProblem(timing: RateTiming): string | null {
  if (timing.days !== null) {
    if (timing.days.length === 0) return 'days: list at least one day, or leave it null for every day';
    if (timing.days.some((d) => !Number.isInteger(d) || d < 1 || d > 7)) return 'days: ISO weekdays, 1 (Monday) to 7 (Sunday)';
    if (new Set(timing.days).size !== timing.days.length) return 'days: a day is listed twice';
  }
  if ((timing.start === null) !== (timing.end === null)) return 'start and end: give both, or neither for the whole day';
  if (timing.start !== null && parseTimeOfDay(timing.start) === null) return 'start: a local time HH:MM:SS';
  if (timing.end !== null && parseTimeOfDay(timing.end) === null) return 'end: a local time HH:MM:SS';
  if (timing.start !== null && timing.start === timing.end)
    return 'start and end: an empty window (equal times); leave both null for the whole day';
  return null;
}

/** How specific a timing is: the most specific matching version of a rate applies. */
export function specificity(timing: RateTiming | null | undefined): number {
  if (!timing) return 1;
  // Within each kind, a time window is narrower than the whole day (weekdays 08-18 over weekdays).
  const windowed = timing.start !== null ? 1 : 0;
  if (timing.holidays === 'only') return 6 + windowed;
  if (timing.days !== null) return 4 + windowed;
  return windowed === 1 || timing.holidays === 'exclude' ? 2 + windowed : 1;
}

/**
 * Whether timing `a` applies before `b` where both match: the more specific; between two of one rank
 * (windows that overlap), the narrower, as a lunch peak 12:00-14:00 written on top of a day price
 * 08:00-20:00; then the one whose written form sorts first, so the choice never depends on the order the
 * store returned the rates in.
 */
export function appliesBefore(a: RateTiming | null | undefined, rankA: number, b: RateTiming | null | undefined, rankB: number): boolean {
  if (rankA !== rankB) return rankA > rankB;
  const [wideA, wideB] = [weeklySeconds(a), weeklySeconds(b)];
  if (wideA !== wideB) return wideA < wideB;
  return (timingKey(a) ?? '') < (timingKey(b) ?? '');
}

/** How many seconds of a week a timing covers (its window times its days; holidays aside). */
function weeklySeconds(timing: RateTiming | null | undefined): number {
  const days = timing?.days?.length ?? 7;
  if (!timing || timing.start === null || timing.end === null) return days * 86_400;
  const length = (parseTimeOfDay(timing.end)! - parseTimeOfDay(timing.start)! + 86_400) % 86_400;
  return days * (length === 0 ? 86_400 : length);
}

function previousDate(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  return new Date(d.getTime() - 86_400_000).toISOString().slice(0, 10);
}

function dayApplies(timing: RateTiming, date: string, weekday: number, holidays: Holidays): boolean {
  if (timing.days !== null && !timing.days.includes(weekday)) return false;
  const holiday = holidays.has(date);
  if (timing.holidays === 'only') return holiday;
  if (timing.holidays === 'exclude') return !holiday;
  return true;
}

/** Whether a timing applies at the instant `at` (epoch ms), on the clock of `timeZone`. No timing applies always. */
export function timingMatches(
  timing: RateTiming | null | undefined,
  at: number,
  timeZone: string,
  holidays: Holidays = NO_HOLIDAYS,
): boolean {
  if (!timing) return true;
  const local = localTime(at, timeZone);
  if (timing.start === null || timing.end === null) return dayApplies(timing, local.date, local.weekday, holidays);
  const start = parseTimeOfDay(timing.start)!;
  const end = parseTimeOfDay(timing.end)!;
  if (start < end) return local.secondOfDay >= start && local.secondOfDay < end && dayApplies(timing, local.date, local.weekday, holidays);
  // Wraps past midnight: tonight's part belongs to today, this morning's to yesterday.
  if (local.secondOfDay >= start) return dayApplies(timing, local.date, local.weekday, holidays);
  if (local.secondOfDay < end) return dayApplies(timing, previousDate(local.date), ((local.weekday + 5) % 7) + 1, holidays);
  return false;
}

/** The local times of day (seconds) at which timings may start or stop applying; midnight always. */
export function edgesOf(timings: ReadonlyArray<RateTiming | null | undefined>): number[] {
  const edges = new Set<number>([0]);
  for (const t of timings) {
    if (!t || t.start === null || t.end === null) continue;
    edges.add(parseTimeOfDay(t.start)!);
    edges.add(parseTimeOfDay(t.end)!);
  }
  return [...edges].sort((a, b) => a - b);
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** The zone's wall clock at `at`, as epoch ms of the same digits in UTC, with the local date. */
function wallClock(at: number, timeZone: string): { local: LocalTime; wall: number } {
  const local = localTime(at, timeZone);
  return { local, wall: Date.parse(`${local.date}T00:00:00Z`) + local.secondOfDay * 1000 + (((at % 1000) + 1000) % 1000) };
}

/** Milliseconds the zone's clock is ahead of UTC at `at`. */
function offsetAt(at: number, timeZone: string): number {
  return wallClock(at, timeZone).wall - at;
}

/**
 * The next instant after `after` (epoch ms) at which a timing with these `edges` may change whether it
 * applies: the wall clock reaching an edge, or the clock itself jumping (a DST change). Between two
 * boundaries the applicable rate cannot change, so rating a call costs a step per boundary, not per
 * second (a 31-day call across daily peak and off-peak windows: about 94 steps, docs/RATING.md).
 */
export function nextBoundary(after: number, timeZone: string, edges: readonly number[]): number {
  const { local, wall: wallNow } = wallClock(after, timeZone);
  const offset = wallNow - after;
  let best = Number.POSITIVE_INFINITY;
  // The next wall-clock edge, read with today's offset; a DST change before it is a boundary itself.
  for (let day = 0; day <= 1 && best === Number.POSITIVE_INFINITY; day++) {
    const midnight = Date.parse(`${local.date}T00:00:00Z`) + day * DAY_MS;
    for (const edge of edges) {
      const wall = midnight + edge * 1000;
      if (wall > wallNow) {
        best = Math.min(best, wall - offset);
      }
    }
  }
  // A DST change within the span also moves the wall clock: found by the offset changing, to the ms.
  const horizon = Math.min(best, after + DAY_MS + HOUR_MS);
  if (offsetAt(horizon, timeZone) !== offset) {
    let lo = after;
    let hi = horizon;
    while (hi - lo > 1) {
      const mid = lo + Math.floor((hi - lo) / 2);
      if (offsetAt(mid, timeZone) === offset) lo = mid;
      else hi = mid;
    }
    return hi;
  }
  return best;
}

/** A copy of a timing (its days list too), so later changes to the original never leak; null for none. */
export function copyTiming(timing: RateTiming | null | undefined): RateTiming | null {
  return timing ? { ...timing, days: timing.days ? [...timing.days] : null } : null;
}

/** A timing in one spelling: days sorted; a timing that says nothing (every day, all day, any day) is null. */
export function normalizeTiming(timing: RateTiming | null | undefined): RateTiming | null {
  if (!timing) return null;
  const days = timing.days === null ? null : [...timing.days].sort((a, b) => a - b);
  const normalized: RateTiming = {
    days: days && days.length === 7 ? null : days,
    start: timing.start,
    end: timing.end,
    holidays: timing.holidays,
  };
  return normalized.days === null && normalized.start === null && normalized.holidays === null ? null : normalized;
}

/**
 * The key that tells a rate's timed versions apart (unique with pricelist, carrier and prefix): the same
 * for two spellings of one timing; null for no timing.
 */
export function timingKey(timing: RateTiming | null | undefined): string | null {
  const t = normalizeTiming(timing);
  if (!t) return null;
  return `days=${t.days ? t.days.join('') : '*'};time=${t.start ?? '*'}-${t.end ?? '*'};holidays=${t.holidays ?? '*'}`;
}
