import { Readable } from 'node:stream';
import { badInputReason } from '../../calls/reasons';
import { HEADER_ROW_REASON, HeaderError, peekRejectFile, csvCells, REJECTS_HEADER, type CsvCells } from '../records';
import { dialectRows } from './dialects';
import { columnsNeeded } from './mapping';
import type { CdrFormat, Layout } from './rows';

/** One row of a switch's file: a data row with its cells and layout, the header, or a row that cannot be read. */
export interface CdrRow {
  /** 0-based position among data rows (fixes the batch); -1 for the header and rows the parser could not read. */
  index: number;
  line: number;
  raw: string;
  cells?: string[];
  layout?: Layout;
  error?: string;
  header?: true;
  /** A copy of the header row further on (files with one concatenated): skipped, not a line. */
  repeated?: true;
}

/**
 * Gives data rows their layout: from the header row when the file has one, else by their number of
 * cells. The first row of a file is its header when it names every column the mapping reads (`header:
 * auto`); a first data row that fits no layout stops the import before anything is sent: the file is
 * not in this format.
 */
class Rows {
  private headerLayout: Layout | null = null;
  /** The header row's text: a row further on that is the same text is the header again. */
  private headerRaw: string | null = null;
  private index = 0;
  private first = true;

  constructor(
    private readonly format: CdrFormat,
    private readonly strict: boolean,
  ) {}

  private layoutError(row: CsvCells, header: { missing: string[] } | null): HeaderError {
    const m = this.format.mapping;
    const counts = this.format.counts;
    const parts = [
      `${m.name}: line ${row.line} has ${row.cells.length} cells, where ${m.name} rows have ${counts.length > 0 ? counts.join(' or ') : 'the columns of a header row'}`,
    ];
    // Some of the mapping's columns named: a header row, but not this mapping's.
    if (header && header.missing.length < columnsNeeded(m).length) parts.push(`(as a header row, it lacks ${header.missing.join(', ')})`);
    if (m.note) parts.push(`- ${m.note}`);
    return new HeaderError(parts.join(' '));
  }

  /** The header (db_text's definition line, or the first row when it names the columns), if this row is it. */
  headerOf(row: CsvCells & { header?: true }): CdrRow | null {
    if (!this.first || row.error !== undefined) return null;
    if (row.header || this.format.mapping.header !== 'none') {
      const found = this.format.header(row.cells);
      if ('layout' in found) {
        this.first = false;
        this.headerLayout = found.layout;
        this.headerRaw = row.raw;
        return { index: -1, line: row.line, raw: row.raw, header: true };
      }
      // A row naming every column the mapping needs is a header row, whatever else it lacks: read as a
      // call row by position, it would be rejected and the file's own names ignored.
      if (row.header || this.format.mapping.header === 'required' || found.namesNeeded)
        throw new HeaderError(
          `${this.format.name}: the header row lacks the column(s) ${found.missing.join(', ')}, which the mapping reads`,
        );
    }
    return null;
  }

  data(row: CsvCells): CdrRow {
    if (row.error !== undefined) return { index: -1, line: row.line, raw: row.raw, error: row.error };
    const first = this.first;
    this.first = false;
    if (this.headerRaw !== null && row.raw === this.headerRaw)
      return { index: -1, line: row.line, raw: row.raw, header: true, repeated: true };
    const layout = this.headerLayout
      ? row.cells.length === this.headerLayout.names.length
        ? this.headerLayout
        : undefined
      : this.format.layoutOf(row.cells.length);
    if (layout === undefined) {
      if (first && this.strict && this.format.mapping.header !== 'required') {
        const asHeader = this.format.header(row.cells);
        throw this.layoutError(row, 'missing' in asHeader ? asHeader : null);
      }
      const expected = this.headerLayout ? String(this.headerLayout.names.length) : this.format.counts.join(' or ');
      return {
        index: this.index++,
        line: row.line,
        raw: row.raw,
        error: badInputReason(`expected ${expected} cells but got ${row.cells.length}`),
      };
    }
    return { index: this.index++, line: row.line, raw: row.raw, cells: row.cells, layout };
  }
}

async function* fileRows(input: Readable, format: CdrFormat): AsyncGenerator<CdrRow> {
  const rows = new Rows(format, true);
  for await (const row of dialectRows(input, format.mapping.dialect, format.mapping.delimiter, true)) {
    const header = rows.headerOf(row);
    if (header) yield header;
    else yield rows.data(row);
  }
}

/**
 * A reject file of a switch format imported again (src/shared/domain/imports/records.ts): each `record` cell
 * read in the format's dialect, under the header row the reject file repeats, each row keeping the
 * line it had in its first file.
 */
async function* rejectRows(input: Readable, format: CdrFormat): AsyncGenerator<CdrRow> {
  const rows = new Rows(format, false);
  let first = true;
  /** A db_text table's definition line, when the header row the reject file repeats is one: its records are under it. */
  let definition: string | null = null;
  for await (const { cells, raw, line, error } of csvCells(input)) {
    if (first) {
      first = false;
      continue;
    }
    const [lineCell, reason, record] = cells;
    if (error !== undefined || cells.length !== 3 || !/^[1-9]\d{0,9}$/.test(lineCell ?? '')) {
      yield { index: -1, line, raw, error: error ?? badInputReason(`a reject file row is ${REJECTS_HEADER}, with a line number first`) };
      continue;
    }
    const originalLine = Number(lineCell);
    const records = dialectRows(Readable.from([Buffer.from(record)]), format.mapping.dialect, format.mapping.delimiter, false, definition);
    for await (const row of records) {
      if (reason === HEADER_ROW_REASON) {
        const header = rows.headerOf(row);
        if (!header) throw new HeaderError(`${format.name}: the reject file's header row is not a header of this format`);
        if ('header' in row && row.header) definition = record;
        yield { ...header, line: originalLine };
        break;
      }
      yield { ...rows.data(row), line: originalLine };
    }
  }
}

/** The rows of a switch's file, or of a reject file of one (its first line `line,reason,record`). */
export async function* cdrRows(input: Readable, format: CdrFormat): AsyncGenerator<CdrRow> {
  const { rejects, stream } = await peekRejectFile(input);
  yield* rejects ? rejectRows(stream, format) : fileRows(stream, format);
}
