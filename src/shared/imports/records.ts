import { Parser, type Options } from 'csv-parse';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { headerProblems } from './line';

export type Format = 'csv' | 'jsonl';

/** One data record of the input: its position among data records, its line number and text. */
export interface SourceRecord {
  /** 0-based position among data records; fixes which batch the record belongs to. */
  index: number;
  /** 1-based line in the file (the header is line 1 of a CSV); for a multi-line CSV record, its last line. */
  line: number;
  raw: string;
  /** CSV: column -> cell. */
  row?: Record<string, string | undefined>;
  /** A record the parser could not read (bad quoting, wrong number of cells). */
  error?: string;
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
async function* jsonlRecords(input: Readable): AsyncGenerator<SourceRecord> {
  const lines = createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  let index = 0;
  for await (const text of lines) {
    line += 1;
    if (text.trim() === '') continue;
    yield { index: index++, line, raw: text };
  }
}

/**
 * csv-parse's stream with each record numbered by the parser's line count at the moment it is emitted:
 * what `info: true` reports as `info.lines`, without the info object that option builds and copies for
 * every record (two fifths of the parse's CPU, a seventh of the import CLI's; docs/BENCHMARKS.md).
 *
 * Inside quotes csv-parse counts the CR and the LF of a CRLF as two lines (outside them, as one), so
 * every such pair read so far is taken off its count.
 */
class NumberedParser extends Parser {
  /** CRLFs inside quoted cells read so far: lines csv-parse counted twice. */
  private overCounted = 0;

  constructor(options: Options) {
    super(options);
    // A record the parser could not read joins the stream where it was met, so it keeps its place in file order.
    this.on('skip', (err: Error & { lines?: number; raw?: string }) => {
      this.push({ record: [], raw: err.raw ?? '', line: err.lines ?? 0, error: err.message } satisfies ParsedRecord);
    });
  }

  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk !== null) {
      const record = chunk as ParsedRecord;
      this.overCounted += quotedCrlfs(record.raw);
      record.line = (record.error === undefined ? this.info.lines : record.line) - this.overCounted;
    }
    return super.push(chunk, encoding);
  }
}

/** CRLFs between a raw record's first and last quote (before a record, only skipped empty lines; after, its own end). */
function quotedCrlfs(raw: string): number {
  const open = raw.indexOf('"');
  if (open < 0) return 0;
  const close = raw.lastIndexOf('"');
  let count = 0;
  for (let at = raw.indexOf('\r\n', open); at >= 0 && at < close; at = raw.indexOf('\r\n', at + 2)) count += 1;
  return count;
}

interface ParsedRecord {
  record: string[];
  raw: string;
  line: number;
  /** Set on a record the parser skipped (bad quoting): why. */
  error?: string;
}

/**
 * CSV with a header row (csv-parse, streaming). A record with the wrong number of cells or broken
 * quoting becomes an error record, so one bad line never stops the import.
 */
async function* csvRecords(input: Readable): AsyncGenerator<SourceRecord> {
  let columns: string[] = [];
  let index = 0;
  const parser = new NumberedParser({
    bom: true,
    skip_empty_lines: true,
    relax_column_count: true,
    skip_records_with_error: true,
    raw: true,
    // Any line end, mixed within a file (CDRs concatenated from several switches): left to itself,
    // csv-parse takes the first line's end for the whole file and misreads lines ending otherwise.
    record_delimiter: ['\r\n', '\n', '\r'],
  });
  input.on('error', (err) => parser.destroy(err));
  input.pipe(parser);
  let header = true;
  for await (const { record, raw, line, error } of parser as AsyncIterable<ParsedRecord>) {
    if (error !== undefined) {
      yield { index: -1, line, raw, error };
      continue;
    }
    // csv-parse keeps a LF line's end in `raw`, and of a CRLF line's only the CR.
    const text = raw.replace(/\r?\n?$/, '');
    if (header) {
      columns = record.map((c) => c.trim());
      const problems = headerProblems(columns);
      if (problems.length > 0) throw new HeaderError(`bad header: ${problems.join('; ')}`);
      header = false;
      continue;
    }
    if (record.length !== columns.length) {
      yield { index: index++, line, raw: text, error: `BAD_USER_INPUT: expected ${columns.length} cells but got ${record.length}` };
      continue;
    }
    const row: Record<string, string | undefined> = {};
    columns.forEach((c, i) => (row[c] = record[i]));
    yield { index: index++, line, raw: text, row };
  }
  if (header) throw new HeaderError('the file is empty: a CSV import needs a header row');
}

export function readRecords(input: Readable, format: Format): AsyncGenerator<SourceRecord> {
  return format === 'jsonl' ? jsonlRecords(input) : csvRecords(input);
}
