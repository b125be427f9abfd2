import { parse } from 'csv-parse';
import type { Readable } from 'node:stream';
import { ServiceError } from '../../infra/errors';
import { stripNumber } from '../numbers/uri';
import { parseDateTime } from '../validation/datetime';
import { prefix as prefixRule, text, TextLimits } from '../validation/text';
import type { DeckRate } from './plan';
import { csvHeaderProblems } from '../validation/csv-header';
import { normalizeTiming, parseTimeOfDay, timingProblem } from '../rating/timing';
import type { RateTiming } from '../types';

/**
 * Reading a rate deck: a CSV file with a header row naming its columns. `prefix` and `rate` are
 * required; `connect_fee`, `rate_increment`, `interval_start` and `description` are optional, with the
 * defaults of createPricelistRate (0, 1, 0, null). Cells are trimmed; an empty cell is an absent value.
 * `days`, `start_time`, `end_time` and `holidays` give a line a timing (docs/RATING.md, "Rates by time of
 * day"); empty, or absent from the header, the line is untimed, as every line was before timings.
 */

export const REQUIRED_COLUMNS = ['prefix', 'rate'] as const;
export const TIMING_COLUMNS = ['days', 'start_time', 'end_time', 'holidays'] as const;
export const OPTIONAL_COLUMNS = ['connect_fee', 'rate_increment', 'interval_start', 'description', ...TIMING_COLUMNS] as const;

/** The whole deck is unusable (its header), or the run was refused before writing anything. */
export class DeckError extends Error {
  constructor(
    message: string,
    /** The error code of the APIs (BAD_USER_INPUT, INVALID_REFERENCE). */
    readonly code: 'BAD_USER_INPUT' | 'INVALID_REFERENCE' = 'BAD_USER_INPUT',
    /** The argument or part at fault (header, pricelist_tag, carrier_tag, effective). */
    readonly field: string = 'header',
  ) {
    super(message);
    this.name = 'DeckError';
  }
}

/** The header's problems against this kind's columns; empty when usable. */
export function headerProblems(columns: readonly string[]): string[] {
  return csvHeaderProblems(columns, REQUIRED_COLUMNS, OPTIONAL_COLUMNS);
}

/** A prefix cell as rating keys prefixes (stripNumber: no visual separators, no leading "+"), or why not. */
export function deckPrefix(cell: string | undefined): { prefix: string } | { reason: string } {
  const raw = (cell ?? '').trim();
  if (raw === '') return { reason: 'prefix: is required' };
  const normalized = stripNumber(raw);
  try {
    prefixRule('prefix', normalized);
  } catch (err) {
    if (err instanceof ServiceError) return { reason: err.message };
    throw err;
  }
  if (!/^[0-9]+$/.test(normalized))
    return { reason: 'prefix: must be digits (after dropping spaces, "-", ".", "(", ")" and a leading "+")' };
  return { prefix: normalized };
}

/** A non-negative integer in minor units, as the rates API takes them (nonNegativeInt); null when empty. */
function integerCell(field: string, cell: string | undefined): number | null {
  const raw = (cell ?? '').trim();
  if (raw === '') return null;
  if (!/^[0-9]+$/.test(raw)) {
    throw new ServiceError(
      'BAD_USER_INPUT',
      /^[+-]?[0-9]*[.,][0-9]+$|^-/.test(raw) ? `${field}: must be a non-negative integer in minor units` : `${field}: must be an integer`,
      { field },
    );
  }
  const value = Number(raw);
  if (!Number.isSafeInteger(value)) throw new ServiceError('BAD_USER_INPUT', `${field}: must be an integer`, { field });
  // The API shows and edits these as GraphQL Int (32 bits): a larger one would make the rate unreadable there.
  if (value > INT32_MAX) throw new ServiceError('BAD_USER_INPUT', `${field}: must be at most ${INT32_MAX}`, { field });
  return value;
}

const INT32_MAX = 2_147_483_647;

const DAY_NAMES = new Map([
  ['mon', 1],
  ['tue', 2],
  ['wed', 3],
  ['thu', 4],
  ['fri', 5],
  ['sat', 6],
  ['sun', 7],
]);

/** One day of a `days` cell: an ISO weekday digit (1 Monday to 7 Sunday) or a three-letter English name. */
function dayOf(token: string): number | null {
  const t = token.trim().toLowerCase();
  if (/^[1-7]$/.test(t)) return Number(t);
  return DAY_NAMES.get(t) ?? null;
}

function badInput(field: string, message: string): ServiceError {
  return new ServiceError('BAD_USER_INPUT', `${field}: ${message}`, { field });
}

/**
 * A `days` cell: a comma-separated list of days and ranges (`1-5`, `1,2,3,4,5`, `6-7`, `mon-fri`,
 * `sat,sun`, any case); null when empty (every day). A range runs forwards: `fri-mon` is refused rather
 * than guessed, since a week has no first day a carrier could be assumed to mean.
 */
function daysCell(cell: string | undefined): number[] | null {
  const raw = (cell ?? '').trim();
  if (raw === '') return null;
  const days: number[] = [];
  for (const item of raw.split(',')) {
    const bounds = item.split('-');
    const from = dayOf(bounds[0]);
    const to = bounds.length === 2 ? dayOf(bounds[1]) : from;
    if (bounds.length > 2 || from === null || to === null) {
      throw badInput(
        'days',
        `${JSON.stringify(item.trim())} is not a day or a range of days (1 Monday to 7 Sunday, or mon to sun: 1-5, mon-fri, "sat,sun")`,
      );
    }
    if (to < from)
      throw badInput('days', `the range ${JSON.stringify(item.trim())} runs backwards; write the earlier day first (1-5, sat-sun)`);
    for (let d = from; d <= to; d += 1) days.push(d);
  }
  return days;
}

/** A `start_time`/`end_time` cell as `HH:MM:SS` (`HH:MM` gets `:00`); null when empty. */
function timeCell(field: string, cell: string | undefined): string | null {
  const raw = (cell ?? '').trim();
  if (raw === '') return null;
  const m = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(raw);
  const time = m ? `${m[1].padStart(2, '0')}:${m[2]}:${m[3] ?? '00'}` : null;
  if (time === null || parseTimeOfDay(time) === null) throw badInput(field, 'must be a local time HH:MM:SS or HH:MM, 00:00:00 to 23:59:59');
  return time;
}

function holidaysCell(cell: string | undefined): RateTiming['holidays'] {
  const raw = (cell ?? '').trim().toLowerCase();
  if (raw === '') return null;
  if (raw === 'only' || raw === 'exclude') return raw;
  throw badInput('holidays', 'must be "only", "exclude" or empty');
}

/**
 * The timing of a row (normalized: days sorted; one that says nothing, like `1-7` alone, is null), or
 * null when its timing cells are empty or absent. Throws ServiceError naming the deck's column at fault.
 */
export function deckTiming(row: Readonly<Record<string, string | undefined>>): RateTiming | null {
  const timing: RateTiming = {
    days: daysCell(row.days),
    start: timeCell('start_time', row.start_time),
    end: timeCell('end_time', row.end_time),
    holidays: holidaysCell(row.holidays),
  };
  if ((timing.start === null) !== (timing.end === null))
    throw badInput(
      timing.start === null ? 'start_time' : 'end_time',
      'give start_time and end_time both, or leave both empty for the whole day',
    );
  if (timing.start !== null && timing.start === timing.end)
    throw badInput('end_time', 'equal to start_time: an empty window (leave both empty for the whole day)');
  const problem = timingProblem(timing);
  if (problem !== null) {
    // Left to timingProblem: a day listed twice (or a rule it gains later). It words the timing's fields
    // (start, end): name the deck's columns instead.
    const message = problem.replace(/^start and end:/, 'start_time and end_time:').replace(/^(start|end):/, '$1_time:');
    throw new ServiceError('BAD_USER_INPUT', message, { field: message.split(/[: ]/)[0] });
  }
  return normalizeTiming(timing);
}

/** A timing as a deck line would spell it (`days 1-5, 08:00:00-18:00:00, holidays exclude`), for messages. */
export function timingText(timing: RateTiming): string {
  const parts: string[] = [];
  if (timing.days !== null) {
    const runs: string[] = [];
    for (let i = 0; i < timing.days.length;) {
      let j = i;
      while (j + 1 < timing.days.length && timing.days[j + 1] === timing.days[j] + 1) j += 1;
      runs.push(j > i ? `${timing.days[i]}-${timing.days[j]}` : `${timing.days[i]}`);
      i = j + 1;
    }
    parts.push(`days ${runs.join(',')}`);
  }
  if (timing.start !== null && timing.end !== null) parts.push(`${timing.start}-${timing.end}`);
  if (timing.holidays !== null) parts.push(`holidays ${timing.holidays}`);
  return parts.join(', ');
}

export type DeckLine =
  | { ok: true; rate: DeckRate }
  | {
      ok: false;
      reason: string;
      prefix: string | null;
      /**
       * The line's timing (null: untimed) when its timing cells could be read; absent when they are what
       * is wrong, so the line names its prefix without telling which of its rates.
       */
      timing?: RateTiming | null;
    };

/**
 * One data row (column -> cell). A rejected row still names its prefix (and its timing, when readable)
 * when that cell is valid, so a bad line never counts as the rate missing from the deck (it changes
 * nothing, not even a removal).
 */
export function deckLine(row: Readonly<Record<string, string | undefined>>): DeckLine {
  const p = deckPrefix(row.prefix);
  if ('reason' in p) return { ok: false, reason: `BAD_USER_INPUT: ${p.reason}`, prefix: null };
  let timing: RateTiming | null;
  try {
    timing = deckTiming(row);
  } catch (err) {
    if (err instanceof ServiceError) return { ok: false, reason: `${err.code}: ${err.message}`, prefix: p.prefix };
    throw err;
  }
  try {
    const rate = integerCell('rate', row.rate);
    if (rate === null) throw new ServiceError('BAD_USER_INPUT', 'rate: is required', { field: 'rate' });
    const descriptionCell = (row.description ?? '').trim();
    return {
      ok: true,
      rate: {
        prefix: p.prefix,
        rate,
        connect_fee: integerCell('connect_fee', row.connect_fee) ?? 0,
        // 1 is what a missing increment means to the fee formula (docs/DESIGN.md section 3), as createPricelistRate stores it.
        rate_increment: integerCell('rate_increment', row.rate_increment) ?? 1,
        interval_start: integerCell('interval_start', row.interval_start) ?? 0,
        description: descriptionCell === '' ? null : text(TextLimits.DESCRIPTION)('description', descriptionCell),
        // Absent, not null, on an untimed line: its rate is stored exactly as before timings.
        ...(timing ? { timing } : {}),
      },
    };
  } catch (err) {
    if (err instanceof ServiceError) return { ok: false, reason: `${err.code}: ${err.message}`, prefix: p.prefix, timing };
    throw err;
  }
}

/** One data record of a deck: its line number and either the parsed row or why it could not be read. */
export interface DeckRecord {
  /** 1-based line in the file (the header is line 1); for a multi-line record, its last line. */
  line: number;
  row?: Record<string, string | undefined>;
  error?: string;
  /** The prefix cell of a record with the wrong number of cells: the deck still names that prefix. */
  prefixCell?: string;
  /**
   * Set on such a record when the header has timing columns: its cells cannot be trusted to say which
   * timing it meant, so it names every rate of its prefix (none is removed).
   */
  timingUnread?: true;
  /**
   * The record may hold lines after its own: a quote left open (never closed, or closed on a later line)
   * swallows them, so which prefixes the deck names is unknown (apply.ts removes nothing then).
   */
  swallowed?: true;
}

/** csv-parse's errors of a quote that ran past its line; a quote inside an unquoted cell (INVALID_OPENING_QUOTE) stays on its line. */
const SWALLOWING_ERRORS: ReadonlySet<string> = new Set(['CSV_QUOTE_NOT_CLOSED', 'CSV_INVALID_CLOSING_QUOTE']);
const LINE_BREAK = /[\r\n]/;

/**
 * The data records of a deck, streamed (csv-parse): one at a time, never the whole file. A record with
 * the wrong number of cells or broken quoting is an error record, so one bad line never stops the deck;
 * a bad header or an empty file throws DeckError before any record is produced.
 */
export async function* readDeck(input: Readable): AsyncGenerator<DeckRecord> {
  let columns: string[] = [];
  const skipped: DeckRecord[] = [];
  const parser = parse({
    bom: true,
    skip_empty_lines: true,
    relax_column_count: true,
    skip_records_with_error: true,
    info: true,
  });
  let lastSkipped = -1;
  parser.on('skip', (err: Error & { lines?: number; code?: string }) => {
    const line = err.lines ?? 0;
    const swallowed = err.code !== undefined && SWALLOWING_ERRORS.has(err.code);
    // One broken line can raise two errors (a bad quote, then the quote left open at the end): one rejection.
    if (line === lastSkipped) {
      const last = skipped[skipped.length - 1];
      if (swallowed && last?.line === line) last.swallowed = true;
      return;
    }
    lastSkipped = line;
    skipped.push({ line, error: `BAD_USER_INPUT: ${err.message}`, ...(swallowed ? { swallowed: true as const } : {}) });
  });
  input.on('error', (err) => parser.destroy(err));
  input.pipe(parser);
  let header = true;
  let timed = false;
  for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
    // The parser may run ahead of this loop: report the skipped records in the order of their lines.
    while (skipped.length > 0 && skipped[0].line < info.lines) yield skipped.shift()!;
    if (header) {
      columns = record.map((c) => c.trim().toLowerCase());
      const problems = headerProblems(columns);
      if (problems.length > 0) {
        parser.destroy();
        input.unpipe(parser);
        throw new DeckError(`bad header: ${problems.join('; ')}`);
      }
      timed = columns.some((c) => (TIMING_COLUMNS as readonly string[]).includes(c));
      header = false;
      continue;
    }
    // A cell spanning lines with a comma in it is a quote closed on a later line, the lines between in
    // it (a quoted description may span lines legitimately: "multi\nline" is one cell, nothing hidden).
    const swallowed = record.some((cell) => LINE_BREAK.test(cell) && cell.includes(',')) ? { swallowed: true as const } : {};
    if (record.length !== columns.length) {
      const prefixCell = record[columns.indexOf('prefix')];
      yield {
        line: info.lines,
        error: `BAD_USER_INPUT: expected ${columns.length} cells but got ${record.length}`,
        ...(prefixCell !== undefined ? { prefixCell } : {}),
        ...(timed ? { timingUnread: true as const } : {}),
        ...swallowed,
      };
      continue;
    }
    const row: Record<string, string | undefined> = {};
    columns.forEach((c, i) => (row[c] = record[i]));
    yield { line: info.lines, row, ...swallowed };
  }
  while (skipped.length > 0) yield skipped.shift()!;
  if (header) throw new DeckError('the deck is empty: it needs a header row (prefix,rate,...)');
}

const ISO_WITH_OFFSET = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?)([+-])(\d{2}):(\d{2})$/;

/**
 * The effective time: ISO 8601 `YYYY-MM-DDTHH:MM:SS[.sss]` followed by `Z`, an offset `+HH:MM`, or
 * nothing (UTC, as every datetime of the API). Null when it is none of these.
 */
export function parseEffective(value: string): Date | null {
  const plain = parseDateTime(value);
  if (plain) return plain;
  const m = ISO_WITH_OFFSET.exec(value);
  if (!m) return null;
  const base = parseDateTime(m[1]);
  const hours = Number(m[3]);
  const minutes = Number(m[4]);
  if (!base || hours > 23 || minutes > 59) return null;
  const offset = (hours * 60 + minutes) * 60_000 * (m[2] === '+' ? 1 : -1);
  return new Date(base.getTime() - offset);
}
