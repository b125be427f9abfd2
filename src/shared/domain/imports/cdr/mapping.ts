/**
 * The mapping of a CDR file's layout onto a call (docs/IMPORTS.md, "Mapping files"): which columns hold
 * the call's identity, parties and times, how times are written, which rows are answered calls, and how
 * per-transaction rows pair into calls. `--map FILE` reads one from JSON; the named formats
 * (src/shared/domain/imports/cdr/builtin.ts) are mappings in the same form, read by the same function.
 */

export type Dialect = 'csv' | 'db';
export type TimeFormat = 'datetime' | 'iso' | 'epoch' | 'epoch_ms' | 'epoch_us';
export type HeaderRule = 'auto' | 'required' | 'none';

/** One test a row must pass to be an answered call: the column's value equals one of, starts with, is not empty, or is a number above. */
export type AnsweredRule =
  | { column: string; equals: string[] }
  | { column: string; prefix: string }
  | { column: string; notEmpty: true }
  | { column: string; above: number };

export interface CallFields {
  /** Joined with "/" when several columns make the switch's unique id. */
  transaction_tag: string[];
  account_tag: string;
  source: string;
  destination: string;
  /** When the call was answered: its begin, from which it is billed. */
  answer: string;
  /** When the call was set up (optional; kept as the record's timestamp_auth). */
  start?: string;
  end?: string;
  /** Billable seconds (decimals allowed): the call ends this long after `answer`. */
  billsec?: string;
  /** Billable milliseconds, as `billsec`. */
  billmsec?: string;
  source_ip?: string;
  carrier_ip?: string;
  destination_account_tag?: string;
  tags?: string;
}

/** Per-transaction rows (Kamailio or OpenSIPS `acc`): a call is its begin row (INVITE) and its end row (BYE). */
export interface PairRule {
  method: string;
  callid: string;
  from_tag: string;
  to_tag: string;
  /** The method of the row that begins a call (its answer time, parties and answered test). */
  begin: string;
  /** The method of the row that ends it (its time is the call's end). */
  end: string;
}

export interface Mapping {
  name: string;
  dialect: Dialect;
  delimiter: string;
  header: HeaderRule;
  /** Column names by position, one list per layout (told apart by their number of cells); none: from the header row. */
  columns: string[][];
  fields: CallFields;
  time: { format: TimeFormat; zone: string | null };
  /** Every rule must hold for a row to be an answered call; none: every row is one. */
  answered: AnsweredRule[];
  pairs: PairRule | null;
  /** Shown with a layout error: what the operator may have to change on the switch. */
  note: string | null;
  /**
   * A named format's own test of the rows of its layouts told apart by number of cells (not of a header
   * row's), for what a mapping cannot say (src/shared/domain/imports/cdr/builtin.ts): why a row that
   * would be a call cannot be read so, or null. A mapping file has none; the import id does not hash it.
   */
  rowCheck?: (cells: readonly string[]) => string | null;
}

/** A mapping that cannot be used, naming the member at fault (`fields.answer: ...`). */
export class MappingError extends Error {}

const FIELD_NAMES = [
  'transaction_tag',
  'account_tag',
  'source',
  'destination',
  'answer',
  'start',
  'end',
  'billsec',
  'billmsec',
  'source_ip',
  'carrier_ip',
  'destination_account_tag',
  'tags',
] as const;
const REQUIRED_FIELDS = ['transaction_tag', 'account_tag', 'source', 'destination', 'answer'] as const;
const TIME_FORMATS: readonly TimeFormat[] = ['datetime', 'iso', 'epoch', 'epoch_ms', 'epoch_us'];

type Json = Record<string, unknown>;

function fail(path: string, problem: string): never {
  throw new MappingError(`${path}: ${problem}`);
}

function object(value: unknown, path: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(path, 'must be an object');
  return value as Json;
}

function onlyKeys(value: Json, path: string, keys: readonly string[]): void {
  for (const key of Object.keys(value))
    if (!keys.includes(key)) fail(path ? `${path}.${key}` : key, `unknown member (known: ${keys.join(', ')})`);
}

function name(value: unknown, path: string): string {
  if (typeof value !== 'string' || value.trim() === '' || value !== value.trim() || value.length > 128)
    fail(path, 'must be a column name: 1 to 128 characters, no surrounding spaces');
  return value;
}

function oneOf<T extends string>(value: unknown, path: string, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !allowed.includes(value as T)) fail(path, `must be one of ${allowed.join(', ')}`);
  return value as T;
}

function layouts(value: unknown): string[][] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length === 0) fail('columns', 'must be a list of column names, or a list of such lists');
  const lists = value.every((v) => Array.isArray(v)) ? (value as unknown[][]) : [value];
  const counts = new Set<number>();
  return lists.map((list, i) => {
    const path = lists.length > 1 ? `columns[${i}]` : 'columns';
    if (list.length === 0) fail(path, 'must name at least one column');
    const names = list.map((c, j) => name(c, `${path}[${j}]`));
    // Rows find their columns by name whatever the case (rows.ts), so "id" and "ID" are one column.
    const seen = new Set<string>();
    for (const n of names) {
      if (seen.has(n.toLowerCase())) fail(path, `column "${n}" appears twice`);
      seen.add(n.toLowerCase());
    }
    if (counts.has(names.length)) fail(path, `two layouts have ${names.length} columns: a row's number of cells must tell them apart`);
    counts.add(names.length);
    return names;
  });
}

function answeredRules(value: unknown): AnsweredRule[] {
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((item, i) => {
    const path = Array.isArray(value) ? `answered[${i}]` : 'answered';
    const rule = object(item, path);
    onlyKeys(rule, path, ['column', 'equals', 'prefix', 'notEmpty', 'above']);
    const column = name(rule.column, `${path}.column`);
    const tests = ['equals', 'prefix', 'notEmpty', 'above'].filter((k) => rule[k] !== undefined);
    if (tests.length !== 1) fail(path, 'needs exactly one of equals, prefix, notEmpty, above');
    if (rule.equals !== undefined) {
      if (!Array.isArray(rule.equals) || rule.equals.length === 0 || !rule.equals.every((v) => typeof v === 'string'))
        fail(`${path}.equals`, 'must be a list of values');
      return { column, equals: rule.equals as string[] };
    }
    if (rule.prefix !== undefined) {
      if (typeof rule.prefix !== 'string' || rule.prefix === '') fail(`${path}.prefix`, 'must be a non-empty string');
      return { column, prefix: rule.prefix };
    }
    if (rule.notEmpty !== undefined) {
      if (rule.notEmpty !== true) fail(`${path}.notEmpty`, 'must be true');
      return { column, notEmpty: true };
    }
    if (typeof rule.above !== 'number' || !Number.isFinite(rule.above)) fail(`${path}.above`, 'must be a number');
    return { column, above: rule.above };
  });
}

function callFields(value: unknown, pairs: boolean): CallFields {
  const fields = object(value, 'fields');
  onlyKeys(fields, 'fields', FIELD_NAMES);
  for (const f of REQUIRED_FIELDS) if (fields[f] === undefined) fail(`fields.${f}`, 'is required');
  const tag = fields.transaction_tag;
  const tagColumns = Array.isArray(tag) ? tag : [tag];
  if (tagColumns.length === 0 || tagColumns.length > 4) fail('fields.transaction_tag', 'must name a column, or a list of 1 to 4 columns');
  const out: CallFields = {
    transaction_tag: tagColumns.map((c, i) => name(c, Array.isArray(tag) ? `fields.transaction_tag[${i}]` : 'fields.transaction_tag')),
    account_tag: name(fields.account_tag, 'fields.account_tag'),
    source: name(fields.source, 'fields.source'),
    destination: name(fields.destination, 'fields.destination'),
    answer: name(fields.answer, 'fields.answer'),
  };
  for (const f of ['start', 'end', 'billsec', 'billmsec', 'source_ip', 'carrier_ip', 'destination_account_tag', 'tags'] as const) {
    if (fields[f] !== undefined) out[f] = name(fields[f], `fields.${f}`);
  }
  if (out.billsec !== undefined && out.billmsec !== undefined) fail('fields', 'give billsec or billmsec, not both');
  if (pairs) {
    if (out.end === undefined) fail('fields.end', "is required with pairs: the end row's time column");
  } else if (out.end === undefined && out.billsec === undefined && out.billmsec === undefined) {
    fail('fields', 'needs end, billsec or billmsec: when the call ends, or how long it was billed');
  }
  return out;
}

function pairRule(value: unknown): PairRule | null {
  if (value === undefined) return null;
  const pairs = object(value, 'pairs');
  const keys = ['method', 'callid', 'from_tag', 'to_tag', 'begin', 'end'] as const;
  onlyKeys(pairs, 'pairs', keys);
  const out = {} as PairRule;
  for (const k of keys) {
    if (pairs[k] === undefined) fail(`pairs.${k}`, 'is required');
    out[k] = name(pairs[k], `pairs.${k}`);
  }
  if (out.begin === out.end) fail('pairs', 'begin and end must be different methods');
  return out;
}

/**
 * The columns every row of a layout (or the header) must have: the call's identity, parties and begin,
 * the answered tests, the pair keys, and its end: the end column, or the billable time. Optional
 * fields (start, addresses, receiver, tags) are read where a layout has them; with pairs, a layout
 * without billable time holds rows to pair (their end comes from the end row).
 */
export function columnsNeeded(mapping: Mapping): string[] {
  const f = mapping.fields;
  const columns = [...f.transaction_tag, f.account_tag, f.source, f.destination, f.answer];
  for (const rule of mapping.answered) columns.push(rule.column);
  if (mapping.pairs) columns.push(mapping.pairs.method, mapping.pairs.callid, mapping.pairs.from_tag, mapping.pairs.to_tag, f.end!);
  return [...new Set(columns)];
}

/** A column's name as rows are matched to it: case and surrounding spaces aside. */
export const norm = (s: string) => s.trim().toLowerCase();

/** Whether a layout (its column names) has `column`, matched as rows are. */
const layoutHas = (layout: readonly string[], column: string) => layout.some((c) => norm(c) === norm(column));

/** Every field the mapping reads and its column (transaction_tag once per column). */
export function namedFields(mapping: Mapping): Array<[string, string]> {
  return Object.entries(mapping.fields).flatMap(([field, column]: [string, string | string[] | undefined]) =>
    column === undefined ? [] : Array.isArray(column) ? column.map((c): [string, string] => [field, c]) : [[field, column]],
  );
}

/**
 * The columns a header row must name: those the mapping needs, and each other column it reads that every
 * one of its layouts has (a header naming the file's columns otherwise would leave it out, and the call
 * would be billed or routed from another column); with no layouts, every column it reads.
 */
export function headerColumns(mapping: Mapping): string[] {
  const everywhere = (column: string) => mapping.columns.every((layout) => layoutHas(layout, column));
  const read = namedFields(mapping).map(([, column]) => column);
  return [...new Set([...columnsNeeded(mapping), ...read.filter(everywhere)])];
}

/** Whether a layout (its column names) has what ends a call: with pairs always (the end row); else the end or the billable time. */
export function endsCalls(mapping: Mapping, has: (column: string) => boolean): boolean {
  const f = mapping.fields;
  return mapping.pairs !== null || [f.end, f.billsec, f.billmsec].some((c) => c !== undefined && has(c));
}

/** Reads and checks a mapping (JSON, already parsed); throws MappingError naming the member at fault. */
export function parseMapping(value: unknown): Mapping {
  const json = object(value, 'mapping');
  onlyKeys(json, '', ['name', 'dialect', 'delimiter', 'header', 'columns', 'fields', 'time', 'answered', 'pairs', 'note']);
  const mappingName = json.name === undefined ? 'map' : json.name;
  if (typeof mappingName !== 'string' || !/^[A-Za-z0-9_.-]{1,64}$/.test(mappingName))
    fail('name', '1 to 64 letters, digits, ".", "_" or "-"');
  const dialect = oneOf<Dialect>(json.dialect, 'dialect', ['csv', 'db'], 'csv');
  const delimiter = json.delimiter === undefined ? (dialect === 'csv' ? ',' : '|') : json.delimiter;
  if (typeof delimiter !== 'string' || delimiter.length !== 1 || /["\r\n\\]/.test(delimiter))
    fail('delimiter', 'must be one character, not a quote, a backslash or a line end');
  const header = oneOf<HeaderRule>(json.header, 'header', ['auto', 'required', 'none'], 'auto');
  const columns = layouts(json.columns);
  if (columns.length === 0 && header !== 'required')
    fail('columns', 'is required unless header is "required" (the columns are then read from the header row)');
  const pairs = pairRule(json.pairs);
  const time = object(json.time ?? {}, 'time');
  onlyKeys(time, 'time', ['format', 'zone']);
  if (time.zone !== undefined && (typeof time.zone !== 'string' || time.zone === '')) fail('time.zone', 'must be an IANA time zone name');
  if (json.note !== undefined && typeof json.note !== 'string') fail('note', 'must be a string');
  const mapping: Mapping = {
    name: mappingName,
    dialect,
    delimiter,
    header,
    columns,
    fields: callFields(json.fields, pairs !== null),
    time: { format: oneOf(time.format, 'time.format', TIME_FORMATS, 'datetime'), zone: (time.zone as string | undefined) ?? null },
    answered: answeredRules(json.answered),
    pairs,
    note: (json.note as string | undefined) ?? null,
  };
  // An optional field is absent from a row whose layout lacks its column: named in no layout at all, it
  // is a mistake that would bill every call otherwise (from the end rather than the billable time).
  const needed = new Set(columnsNeeded(mapping));
  for (const [field, column] of namedFields(mapping))
    if (columns.length > 0 && !needed.has(column) && !columns.some((layout) => layoutHas(layout, column)))
      fail(`fields.${field}`, `names column "${column}", which no layout in columns has`);
  for (const [i, layout] of columns.entries()) {
    const path = columns.length > 1 ? `columns[${i}]` : 'columns';
    const known = new Set(layout);
    for (const c of columnsNeeded(mapping)) if (!known.has(c)) fail(path, `has no column "${c}", which the mapping reads`);
    if (!endsCalls(mapping, (c) => known.has(c))) fail(path, 'has none of the columns of fields.end, fields.billsec, fields.billmsec');
  }
  return mapping;
}
