import { createHash } from 'node:crypto';
import { badInputField, badInputReason } from '../../calls/reasons';
import type { Input } from '../validate-record';
import { splitTags } from '../line';
import { Zone } from './local-time';
import { columnsNeeded, endsCalls, headerColumns, MappingError, norm, type AnsweredRule, type Mapping } from './mapping';
import { choose, durationMs, instantsOf, readTime, type Instants } from './times';

/**
 * A mapping made ready to read rows (docs/IMPORTS.md, "Mapping files"): each layout's column positions
 * looked up once, so a row costs a few array reads, the answered test, the time cells and the agent's
 * own validation (src/shared/domain/imports/validate-record.ts), as a canonical CSV line does.
 */

/** Why a row is not a call of its own: the summary counts each. */
export type Skip = 'unanswered' | 'other';

/** The parts of a call read from one row, times as candidate instants (src/shared/domain/imports/cdr/times.ts). */
export interface CallParts {
  input: Input;
  start: Instants | null;
  answer: Instants;
  end: Instants | null;
  billMs: number | null;
  /** Which column each field came from, to name it in a reject. */
  columns: Readonly<Record<string, string>>;
}

/** A row of per-transaction accounting (pairs): the call's begin row or its end row. */
export interface Leg {
  role: 'begin' | 'end';
  callid: string;
  fromTag: string;
  toTag: string;
  /** begin: the call read from it; end: its time. */
  parts: CallParts | null;
  end: Instants | null;
}

export type RowOutcome =
  { kind: 'call'; parts: CallParts } | { kind: 'leg'; leg: Leg } | { kind: 'skip'; why: Skip } | { kind: 'invalid'; reason: string };

interface Test {
  at: number;
  rule: AnsweredRule;
}

/** A layout's column positions (-1: not in it). */
export interface Layout {
  names: string[];
  tag: number[];
  account: number;
  source: number;
  destination: number;
  answer: number;
  start: number;
  end: number;
  billsec: number;
  billmsec: number;
  sourceIp: number;
  carrierIp: number;
  destinationAccount: number;
  tags: number;
  answered: Test[];
  /** Which column each field comes from, for rejects: with and without the billable time. */
  columns: { billed: Readonly<Record<string, string>>; ended: Readonly<Record<string, string>> };
  method: number;
  callid: number;
  fromTag: number;
  toTag: number;
  /** The mapping's rowCheck, for a layout chosen by number of cells. */
  check: ((cells: readonly string[]) => string | null) | null;
}

const bad = badInputReason;
const DECIMAL = /^[-+]?(\d+(\.\d*)?|\.\d+)$/;

export class CdrFormat {
  readonly name: string;
  /** What the import id hashes besides the content: the same file read another way is another import. */
  readonly key: string;
  private readonly zone: Zone | null;
  private readonly byCount = new Map<number, Layout>();

  constructor(
    readonly mapping: Mapping,
    zoneOverride: string | null = null,
  ) {
    this.name = mapping.name;
    const zoneName = zoneOverride ?? mapping.time.zone;
    if (mapping.time.format === 'datetime' && zoneName === null)
      throw new MappingError(
        `time.zone: ${mapping.name} reads local times: give the switch's time zone with --time-zone (an IANA name such as Europe/Berlin; UTC when the switch writes UTC)`,
      );
    this.zone = zoneName === null ? null : new Zone(zoneName);
    for (const names of mapping.columns) this.byCount.set(names.length, this.layout(names, mapping.rowCheck ?? null));
    const canonical = JSON.stringify({ ...mapping, time: { ...mapping.time, zone: this.zone?.name ?? null } });
    this.key = `cdr:${mapping.name}:${createHash('sha256').update(canonical).digest('hex').slice(0, 16)}`;
  }

  /** The layout rows of `count` cells have, if any. */
  layoutOf(count: number): Layout | undefined {
    return this.byCount.get(count);
  }

  /** The cell counts the mapping's layouts have, for messages. */
  get counts(): number[] {
    return [...this.byCount.keys()].sort((a, b) => a - b);
  }

  /**
   * A header row: a first row naming (case aside, db_text types aside) every column the mapping reads.
   * Returns its layout, or the columns it lacks.
   */
  header(cells: string[]): { layout: Layout } | { missing: string[]; namesNeeded: boolean } {
    const names = cells.map((c) => c.trim().replace(/\(.*\)$/, ''));
    const present = new Set(names.map(norm));
    const missing = headerColumns(this.mapping).filter((c) => !present.has(norm(c)));
    const namesNeeded = columnsNeeded(this.mapping).every((c) => present.has(norm(c)));
    if (missing.length === 0 && !endsCalls(this.mapping, (c) => present.has(norm(c))))
      missing.push([this.mapping.fields.end, this.mapping.fields.billsec, this.mapping.fields.billmsec].filter(Boolean).join(' or '));
    // A header row names its columns: nothing for a row check to doubt.
    return missing.length === 0 ? { layout: this.layout(names, null) } : { missing, namesNeeded };
  }

  private layout(names: string[], check: Layout['check']): Layout {
    const index = new Map<string, number>();
    names.forEach((n, i) => {
      if (!index.has(norm(n))) index.set(norm(n), i);
    });
    const at = (column: string | undefined) => (column === undefined ? -1 : (index.get(norm(column)) ?? -1));
    const f = this.mapping.fields;
    const p = this.mapping.pairs;
    return {
      names,
      tag: f.transaction_tag.map((c) => at(c)),
      account: at(f.account_tag),
      source: at(f.source),
      destination: at(f.destination),
      answer: at(f.answer),
      start: at(f.start),
      end: at(f.end),
      billsec: at(f.billsec),
      billmsec: at(f.billmsec),
      sourceIp: at(f.source_ip),
      carrierIp: at(f.carrier_ip),
      destinationAccount: at(f.destination_account_tag),
      tags: at(f.tags),
      answered: this.mapping.answered.map((rule) => ({ at: at(rule.column), rule })),
      columns: { billed: this.fieldColumns(true), ended: this.fieldColumns(false) },
      method: at(p?.method),
      callid: at(p?.callid),
      fromTag: at(p?.from_tag),
      toTag: at(p?.to_tag),
      check,
    };
  }

  /** One data row, its cells as many as its layout's columns. */
  row(cells: string[], l: Layout): RowOutcome {
    const pairs = this.mapping.pairs;
    const bill = l.billsec >= 0 ? cells[l.billsec].trim() : l.billmsec >= 0 ? cells[l.billmsec].trim() : '';
    if (pairs) {
      const method = cells[l.method].trim().toUpperCase();
      const isEnd = method === pairs.end.toUpperCase();
      // A BYE that failed (481 after BYEs crossed, 408 timed out) ended nothing, and may be logged after
      // the one that did: taken as the end, it billed the call too long. The answered test (2xx) says.
      if (isEnd && !this.answered(cells, l)) return { kind: 'skip', why: 'other' };
      // A row with its billable time is a whole call (OpenSIPS's cdr flag); any other row is paired.
      if (isEnd || (method === pairs.begin.toUpperCase() && bill === '')) {
        const callid = cells[l.callid].trim();
        const fromTag = cells[l.fromTag].trim();
        const toTag = cells[l.toTag].trim();
        if (callid === '') return { kind: 'invalid', reason: bad(`transaction_tag (column ${pairs.callid}): is required`) };
        if (isEnd) {
          const end = this.time(cells, l.end, this.mapping.fields.end!, 'timestamp_end');
          if (typeof end === 'string') return { kind: 'invalid', reason: end };
          return { kind: 'leg', leg: { role: 'end', callid, fromTag, toTag, parts: null, end } };
        }
        const answered = this.answered(cells, l);
        if (typeof answered === 'string') return { kind: 'invalid', reason: answered };
        if (!answered) return { kind: 'skip', why: 'unanswered' };
        const parts = this.parts(cells, l, false);
        if (typeof parts === 'string') return { kind: 'invalid', reason: parts };
        return { kind: 'leg', leg: { role: 'begin', callid, fromTag, toTag, parts, end: null } };
      }
      if (method !== pairs.begin.toUpperCase()) return { kind: 'skip', why: 'other' };
    }
    const answered = this.answered(cells, l);
    if (typeof answered === 'string') return { kind: 'invalid', reason: answered };
    if (!answered) return { kind: 'skip', why: 'unanswered' };
    const parts = this.parts(cells, l, true);
    return typeof parts === 'string' ? { kind: 'invalid', reason: parts } : { kind: 'call', parts };
  }

  /** Whether the row is an answered call; a string (the reject reason) when a number it tests is none. */
  private answered(cells: string[], l: Layout): boolean | string {
    for (const { at, rule } of l.answered) {
      const value = cells[at].trim();
      if ('equals' in rule) {
        if (!rule.equals.includes(value)) return false;
      } else if ('prefix' in rule) {
        if (!value.startsWith(rule.prefix)) return false;
      } else if ('notEmpty' in rule) {
        if (value === '') return false;
      } else {
        if (value === '') return false;
        // Not a number is not an unanswered call: skipped, it would be lost without a trace.
        if (!DECIMAL.test(value)) return bad(`answered (column ${rule.column}): "${value}" is not a number`);
        if (!(Number(value) > rule.above)) return false;
      }
    }
    return true;
  }

  /** A time cell's instants, or (a string) the reject reason naming its field and column. */
  private time(cells: string[], at: number, column: string, field: string): Instants | string {
    const value = at >= 0 ? cells[at].trim() : '';
    if (value === '') return bad(`${field} (column ${column}): is required`);
    const read = readTime(value, this.mapping.time.format, this.zone);
    return typeof read === 'string' ? bad(`${field} (column ${column}): ${read}`) : read;
  }

  /** Which column each field comes from; the end from the billable time when `billed`. */
  private fieldColumns(billed: boolean): Record<string, string> {
    const f = this.mapping.fields;
    const columns: Record<string, string> = {
      transaction_tag: f.transaction_tag.join('/'),
      account_tag: f.account_tag,
      source: f.source,
      destination: f.destination,
      timestamp_begin: f.answer,
      timestamp_end: (billed ? (f.billsec ?? f.billmsec) : undefined) ?? f.end ?? '',
    };
    for (const [field, column] of [
      ['timestamp_auth', f.start],
      ['source_ip', f.source_ip],
      ['carrier_ip', f.carrier_ip],
      ['destination_account_tag', f.destination_account_tag],
      ['tags', f.tags],
    ] as const)
      if (column !== undefined) columns[field] = column;
    return columns;
  }

  /** The call's fields and times from one row; `whole`: its end too (else its end row gives it). A string: why not. */
  private parts(cells: string[], l: Layout, whole: boolean): CallParts | string {
    const checked = l.check?.(cells);
    if (checked) return checked;
    const f = this.mapping.fields;
    const cell = (at: number) => (at >= 0 ? cells[at].trim() : '');
    const input: Input = {};
    const tag = l.tag.length === 1 ? cell(l.tag[0]) : l.tag.map(cell).join('/');
    if (tag !== '' && tag !== l.tag.map(() => '').join('/')) input.transaction_tag = tag;
    const text = (field: string, at: number) => {
      const value = cell(at);
      if (value !== '') input[field] = value;
    };
    text('account_tag', l.account);
    text('source', l.source);
    text('destination', l.destination);
    text('source_ip', l.sourceIp);
    text('carrier_ip', l.carrierIp);
    text('destination_account_tag', l.destinationAccount);
    if (l.tags >= 0 && cell(l.tags) !== '') input.tags = splitTags(cell(l.tags));
    const answer = this.time(cells, l.answer, f.answer, 'timestamp_begin');
    if (typeof answer === 'string') return answer;
    let start: Instants | null = null;
    if (l.start >= 0 && cell(l.start) !== '') {
      const read = this.time(cells, l.start, f.start!, 'timestamp_auth');
      if (typeof read === 'string') return read;
      start = read;
    }
    let billMs: number | null = null;
    const billColumn = l.billsec >= 0 ? f.billsec! : l.billmsec >= 0 ? f.billmsec! : null;
    const billValue = billColumn === null ? '' : cell(l.billsec >= 0 ? l.billsec : l.billmsec);
    if (billValue !== '') {
      billMs = durationMs(billValue, l.billsec >= 0 ? 'seconds' : 'ms');
      if (billMs === null)
        return bad(`timestamp_end (column ${billColumn}): must be a number of ${l.billsec >= 0 ? 'seconds' : 'milliseconds'}`);
    }
    let end: Instants | null = null;
    if (whole && l.end >= 0 && cell(l.end) !== '') {
      const read = this.time(cells, l.end, f.end!, 'timestamp_end');
      // With a billable time the end cell only helps read a repeated hour: a bad one is not the call's problem.
      if (typeof read === 'string') {
        if (billMs === null) return read;
      } else end = read;
    }
    if (whole && end === null && billMs === null) return bad(`timestamp_end (column ${f.end ?? billColumn}): is required`);
    const columns = billMs !== null ? l.columns.billed : l.columns.ended;
    return { input, start, answer, end, billMs, columns };
  }
}

/**
 * The Input of a call from its parts (and, for a paired call, the end row's time): times read as one
 * consistent reading (src/shared/domain/imports/cdr/times.ts), the end at answer + billable time when the
 * switch wrote one. A string: why the call cannot be read.
 */
export function callInput(parts: CallParts, endOverride: Instants | null = null): Input | string {
  const end = endOverride ?? parts.end;
  const { start, answer, billMs } = parts;
  let begin: number;
  let finish: number;
  let auth: number | null;
  if (typeof answer === 'number' && (end === null || typeof end === 'number') && (start === null || typeof start === 'number')) {
    // One reading of every time: the common case, without the search.
    begin = answer;
    finish = billMs !== null && endOverride === null ? begin + billMs : (end as number);
    auth = start;
  } else {
    const starts = start === null ? null : instantsOf(start);
    const answers = instantsOf(answer);
    const ends = end === null ? null : instantsOf(end);
    const [s, a, e] = choose(starts, answers, ends, billMs);
    begin = answers[a];
    finish = billMs !== null && endOverride === null ? begin + billMs : ends![e];
    auth = starts === null ? null : starts[s];
  }
  if (finish < begin)
    return bad(
      `timestamp_end (column ${parts.columns.timestamp_end}): the call ends before it was answered (column ${parts.columns.timestamp_begin})`,
    );
  const input = parts.input;
  input.timestamp_begin = begin / 1000;
  input.timestamp_end = finish / 1000;
  if (auth !== null) input.timestamp_auth = auth / 1000;
  return input;
}

/** A validation reason naming the column a field came from: `BAD_USER_INPUT: account_tag (column accountcode): is required`. */
export function withColumn(reason: string, columns: Readonly<Record<string, string>>): string {
  const named = badInputField(reason);
  if (!named || columns[named.field] === undefined || columns[named.field] === '') return reason;
  return bad(`${named.field} (column ${columns[named.field]}): ${named.problem}`);
}
