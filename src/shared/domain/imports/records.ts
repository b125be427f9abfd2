import { Parser, type Options } from 'csv-parse';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { badInputReason } from '../calls/reasons';
import { headerProblems } from './line';

export type Format = 'csv' | 'jsonl';

/** One data record of the input: its position among data records, its line number and text. */
export interface SourceRecord {
  /** 0-based position among data records; fixes which batch the record belongs to. -1: a record the parser could not read. */
  index: number;
  /** 1-based line in the file (the header is line 1 of a CSV); for a record spanning lines, its last line. */
  line: number;
  /** The record as it is in the file, its own line end and any empty lines before it left out. */
  raw: string;
  /** CSV: column -> cell. */
  row?: Record<string, string | undefined>;
  /** A record the parser could not read (bad quoting, wrong number of cells). */
  error?: string;
  /** The file's header row (yielded once, before any data record): what a reject file repeats first. */
  header?: true;
}

export class HeaderError extends Error {}

export function formatOf(path: string, explicit: string | undefined): Format {
  if (explicit) {
    if (explicit !== 'csv' && explicit !== 'jsonl') throw new HeaderError(`--format must be csv or jsonl (got "${explicit}")`);
    return explicit;
  }
  return /\.(jsonl|ndjson)$/i.test(path) ? 'jsonl' : 'csv';
}

/** JSON lines: one object per non-empty line. */
/** A line's text without the byte order mark an editor (on Windows) writes at a file's start: not part of the first record. */
export function withoutBom(text: string, line = 1): string {
  return line === 1 ? text.replace(/^\uFEFF/, '') : text;
}

async function* jsonlRecords(input: Readable): AsyncGenerator<SourceRecord> {
  const lines = createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  let index = 0;
  for await (const read of lines) {
    line += 1;
    const text = withoutBom(read, line);
    if (text.trim() === '') continue;
    yield { index: index++, line, raw: text };
  }
}

/** One CSV record as read: its cells, or why it could not be read. */
export interface CsvCells {
  cells: string[];
  /** The record's text (see SourceRecord.raw). */
  raw: string;
  line: number;
  /** Set on a record the parser could not read (bad quoting): why (the first problem met in it). */
  error?: string;
}

/** csv-parse's state machine, which its stream runs (`Parser.api`): the one hook the reader needs. */
interface ParserApi {
  __resetRecord(this: ParserApi): void;
  state: { recordHasError: boolean; rawBuffer: { toString(encoding: BufferEncoding): string } };
  options: { encoding: BufferEncoding };
}

/**
 * csv-parse's stream with each record's raw text trimmed to the record and numbered by the line ends
 * read so far, and a record it could not read reported whole, once, when it ends.
 *
 * Numbers: each record's raw text holds every line end read since the previous record (empty lines
 * skipped before it, its own line ends inside quotes, its own end; of a CRLF ending a record csv-parse
 * keeps only the CR), so counting them (CRLF, LF or CR alone: one each) gives each record its line,
 * whatever mix of line ends the file uses and however the input is chunked. csv-parse's own count
 * (`info.lines`) counts a quoted CRLF twice, and runs on inside a broken quote the same way.
 *
 * Unreadable records: with `skip_records_with_error` csv-parse reports the problem where it meets it,
 * with the text read so far (`t"2,a,...` as `t"`), once per problem in the record, and keeps reading
 * the record to its end (a broken quote may run over several lines), then drops it. An operator needs
 * the whole record to correct it (docs/IMPORTS.md, "Rejects"), so the first problem is kept and the
 * record is reported when csv-parse drops it, with everything it read for it. csv-parse offers no hook
 * at that point: its `__resetRecord`, which ends every record, is wrapped, and the reader fails loudly
 * if a new csv-parse release renames it (test/unit/import/records.test.ts pins the behaviour). A quote
 * left open at the end of the input ends no record: that problem is reported with the whole rest of
 * the input, which is the record.
 */
class NumberedParser extends Parser {
  /** Line ends read so far, in the raw text of the records emitted. */
  private lineEnds = 0;
  /** The first problem met in the record being read. */
  private problem: string | undefined;

  constructor(options: Options) {
    super(options);
    this.on('skip', (err: Error & { code?: string }, raw: string | undefined) => {
      this.problem ??= err.message;
      if (err.code === 'CSV_QUOTE_NOT_CLOSED') this.failed(raw ?? '');
    });
    const api = (this as unknown as { api: ParserApi }).api;
    const reset = api.__resetRecord;
    if (typeof reset !== 'function')
      throw new Error('csv-parse has no __resetRecord: the CDR reader must be adapted to this csv-parse release');
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the wrapper runs as csv-parse's method, on its `this`
    const reader = this;
    api.__resetRecord = function (this: ParserApi) {
      if (this.state.recordHasError) reader.failed(this.state.rawBuffer.toString(this.options.encoding));
      reset.call(this);
    };
  }

  /** A record csv-parse is dropping: emitted in its place in the stream, with its first problem. */
  private failed(raw: string): void {
    const error = this.problem ?? 'unreadable record';
    this.problem = undefined;
    this.push({ record: [], raw, line: 0, error, ended: false } satisfies ParsedRecord);
  }

  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk !== null) {
      const record = chunk as ParsedRecord;
      const { text, ends, ownEnd } = trimRecord(record.raw);
      record.line = this.lineEnds + ends - (ownEnd ? 1 : 0) + 1;
      record.raw = text;
      record.ended = ownEnd;
      this.lineEnds += ends;
    }
    return super.push(chunk, encoding);
  }
}

/** Line ends in `s`: a CRLF, a lone CR and a lone LF count one each. */
function countLineEnds(s: string): number {
  let count = 0;
  if (s.indexOf('\r') < 0) {
    for (let at = s.indexOf('\n'); at >= 0; at = s.indexOf('\n', at + 1)) count += 1;
    return count;
  }
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 13) {
      count += 1;
      if (s.charCodeAt(i + 1) === 10) i += 1;
    } else if (c === 10) count += 1;
  }
  return count;
}

/**
 * A record's raw text without the empty lines before it and its own line end, the line ends it held,
 * and whether it ended with one. A record cannot begin with a line end (that is an empty line), and one
 * inside a quoted cell is followed by more of the record, so only the edges are trimmed.
 */
function trimRecord(raw: string): { text: string; ends: number; ownEnd: boolean } {
  const ends = countLineEnds(raw);
  if (ends === 0) return { text: raw, ends, ownEnd: false };
  let start = 0;
  while (start < raw.length && (raw.charCodeAt(start) === 10 || raw.charCodeAt(start) === 13)) start += 1;
  let end = raw.length;
  const last = raw.charCodeAt(end - 1);
  if (end > start && last === 10) end -= raw.charCodeAt(end - 2) === 13 && end - 2 >= start ? 2 : 1;
  else if (end > start && last === 13) end -= 1;
  return { text: raw.slice(start, end), ends, ownEnd: end < raw.length };
}

interface ParsedRecord {
  record: string[];
  raw: string;
  line: number;
  /** Whether its own line end followed it (all but a last record the input ends inside). */
  ended: boolean;
  /** Set on a record the parser skipped (bad quoting): why. */
  error?: string;
}

/** How csvCells reads its input. */
export interface CsvReading {
  /** One character; `,` unless given. */
  delimiter?: string;
  /**
   * A file of calls: spaces and tabs before a cell are dropped, so that one before a quoted cell is no
   * error (FreeSWITCH's own default template writes `"${bleg_uuid}", "${accountcode}"`); every reader
   * trims such cells anyway, and a quoted cell keeps its own spaces. Not for a reject file's own cells:
   * its record cell is written unquoted when it can be, and may begin with its record's own tab.
   */
  ltrim?: boolean;
  /**
   * The file's writer ends every row with a line end (a switch's file): a last record without one whose
   * last cell is not quoted comes out as TRUNCATED_ROW, however whole its cells look. A quoted last cell
   * closed by its quote is whole (cut inside its quotes, the record is a quote left open).
   */
  lastLineEnd?: boolean;
}

/** Why a last row without its line end is rejected (a switch's file: csvCells' lastLineEnd). */
export const TRUNCATED_ROW = badInputReason("truncated: the file ends before this row's line end (cut while being written); not rated");

/**
 * The records of a CSV file (csv-parse, streaming), as cells: no header handling. A record with broken
 * quoting comes out whole with its problem, so one bad line never stops the import.
 */
export async function* csvCells(
  input: Readable,
  { delimiter = ',', ltrim = false, lastLineEnd = false }: CsvReading = {},
): AsyncGenerator<CsvCells> {
  const parser = new NumberedParser({
    bom: true,
    delimiter,
    skip_empty_lines: true,
    relax_column_count: true,
    skip_records_with_error: true,
    raw: true,
    ltrim,
    // Any line end, mixed within a file (CDRs concatenated from several switches): left to itself,
    // csv-parse takes the first line's end for the whole file and misreads lines ending otherwise.
    record_delimiter: ['\r\n', '\n', '\r'],
  });
  input.on('error', (err) => parser.destroy(err));
  input.pipe(parser);
  for await (const { record, raw, line, error, ended } of parser as AsyncIterable<ParsedRecord>) {
    if (error !== undefined) yield { cells: record, raw, line, error };
    else if (lastLineEnd && !ended && !raw.endsWith('"')) yield { cells: record, raw, line, error: TRUNCATED_ROW };
    else yield { cells: record, raw, line };
  }
}

/**
 * CSV with a header row. A record with the wrong number of cells or broken quoting becomes an error
 * record, so one bad line never stops the import. The header is yielded first (`header: true`).
 */
async function* csvRecords(input: Readable): AsyncGenerator<SourceRecord> {
  let columns: string[] | null = null;
  let index = 0;
  for await (const { cells, raw, line, error } of csvCells(input, { ltrim: true })) {
    if (error !== undefined) {
      yield { index: -1, line, raw, error };
      continue;
    }
    if (columns === null) {
      columns = cells.map((c) => c.trim());
      const problems = headerProblems(columns);
      if (problems.length > 0) throw new HeaderError(`bad header: ${problems.join('; ')}`);
      yield { index: -1, line, raw, header: true };
      continue;
    }
    if (cells.length !== columns.length) {
      yield { index: index++, line, raw, error: `BAD_USER_INPUT: expected ${columns.length} cells but got ${cells.length}` };
      continue;
    }
    const row: Record<string, string | undefined> = {};
    for (let i = 0; i < columns.length; i++) row[columns[i]] = cells[i];
    yield { index: index++, line, raw, row };
  }
  if (columns === null) throw new HeaderError('the file is empty: a CSV import needs a header row');
}

/** The header of a reject file (src/cli/import/rejects.ts): `line,reason,record`. */
export const REJECTS_HEADER = 'line,reason,record';
/** The reason a reject file gives its copy of the source's header row (line 1). */
export const HEADER_ROW_REASON = 'header row, kept so that this file can be imported again';

/**
 * The input with its first bytes looked at: whether it is a reject file (its first line is
 * REJECTS_HEADER), and a stream of the whole input again.
 */
export async function peekRejectFile(input: Readable): Promise<{ rejects: boolean; stream: Readable }> {
  const iterator = input[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  const head: Buffer[] = [];
  let size = 0;
  let done = false;
  // The header and its line end, after a possible byte order mark.
  while (size < REJECTS_HEADER.length + 4) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    head.push(chunk);
    size += chunk.length;
  }
  const start = Buffer.concat(head);
  const text = withoutBom(start.toString('utf8'));
  const rejects = text.startsWith(REJECTS_HEADER) && /^(\r|\n|$)/.test(text.slice(REJECTS_HEADER.length));
  async function* replay(): AsyncGenerator<Buffer> {
    if (start.length > 0) yield start;
    if (done) return;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      yield typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    }
  }
  return { rejects, stream: Readable.from(replay(), { objectMode: false }) };
}

/**
 * A reject file imported again: each `record` cell is read in the import's format (a CSV one under the
 * header row the reject file repeats first) and keeps the line it had in its first file, so a reject of
 * a reject names the same line. Data records are numbered in the order they come.
 */
async function* rejectRecords(input: Readable, format: Format): AsyncGenerator<SourceRecord> {
  let header: string | null = null;
  let index = 0;
  let first = true;
  for await (const { cells, raw, line, error } of csvCells(input)) {
    if (first) {
      first = false;
      continue; // line,reason,record
    }
    if (error !== undefined) {
      yield { index: -1, line, raw, error };
      continue;
    }
    const [lineCell, reason, record] = cells;
    const originalLine = Number(lineCell);
    if (cells.length !== 3 || !/^[1-9]\d{0,9}$/.test(lineCell ?? '')) {
      yield { index: -1, line, raw, error: badInputReason(`a reject file row is ${REJECTS_HEADER}, with a line number first`) };
      continue;
    }
    if (reason === HEADER_ROW_REASON) {
      header ??= record;
      if (format === 'csv') {
        // Checked as any CSV header is, before any record is read.
        for await (const r of csvRecords(Readable.from([Buffer.from(record)]))) if (r.header) yield { ...r, line: originalLine };
      }
      continue;
    }
    if (format === 'csv' && header === null) throw new HeaderError('this reject file has no header row: a CSV import needs one');
    const text = format === 'csv' ? `${header}\n${record}` : record;
    for await (const r of format === 'csv'
      ? csvRecords(Readable.from([Buffer.from(text)]))
      : jsonlRecords(Readable.from([Buffer.from(text)]))) {
      if (r.header) continue;
      yield { ...r, line: originalLine, index: r.index < 0 ? -1 : index++ };
    }
  }
}

/**
 * The records of an import. A reject file (its first line `line,reason,record`) is read as the records
 * it holds, in the given format: an operator corrects it and imports it as it is.
 */
export async function* readRecords(input: Readable, format: Format): AsyncGenerator<SourceRecord> {
  const { rejects, stream } = await peekRejectFile(input);
  if (rejects) yield* rejectRecords(stream, format);
  else yield* format === 'jsonl' ? jsonlRecords(stream) : csvRecords(stream);
}
