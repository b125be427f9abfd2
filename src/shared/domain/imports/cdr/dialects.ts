import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { csvCells, type CsvCells } from '../records';
import type { Dialect } from './mapping';

/**
 * The files Kamailio's and OpenSIPS's text database modules write, read as rows of cells:
 * - db_flatstore: one row per line, values separated by `|` (its `delimiter` parameter), no quoting
 *   and no escapes (db_flatstore.c writes strings as they are; `encode_delimiter` percent-encodes the
 *   delimiter, which is kept as written);
 * - db_text: a first line of column definitions (`id(int,auto) method(string) ...`), then rows
 *   separated by `:` with `\:`, `\\`, `\n`, `\r`, `\t` and `\0` escaped (README of db_text).
 * Told apart by the first line. Lines end in LF (or CRLF); empty lines are skipped and counted.
 */

/** A db_text column definition: `name(type)` or `name(type,attr)`. */
const DB_TEXT_COLUMN = /^([A-Za-z_][A-Za-z0-9_]*)\((?:int|double|str|string|datetime|blob)(?:,[a-z]+)*\)$/;

/** The column names of a db_text table definition line, or null when the line is not one. */
export function dbTextHeader(line: string): string[] | null {
  const parts = line.trim().split(/\s+/);
  if (parts.length === 0 || parts[0] === '') return null;
  const names: string[] = [];
  for (const part of parts) {
    const m = DB_TEXT_COLUMN.exec(part);
    if (!m) return null;
    names.push(m[1]);
  }
  return names;
}

const UNESCAPE: Readonly<Record<string, string>> = { n: '\n', r: '\r', t: '\t', '0': '\0', '\\': '\\', ':': ':' };

/** A db_text row's values: split on unescaped ':' and unescaped. */
export function dbTextCells(line: string): string[] {
  if (line.indexOf('\\') < 0) return line.split(':');
  const cells: string[] = [];
  let cell = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '\\' && i + 1 < line.length) {
      const next = line[++i];
      cell += UNESCAPE[next] ?? next;
    } else if (c === ':') {
      cells.push(cell);
      cell = '';
    } else cell += c;
  }
  cells.push(cell);
  return cells;
}

async function* dbRows(input: Readable, delimiter: string): AsyncGenerator<CsvCells & { header?: true }> {
  const lines = createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  let dbText = false;
  let first = true;
  for await (const text of lines) {
    line += 1;
    const raw = line === 1 ? text.replace(/^\uFEFF/, '') : text;
    if (raw.trim() === '') continue;
    if (first) {
      first = false;
      const names = dbTextHeader(raw);
      if (names) {
        dbText = true;
        yield { cells: names, raw, line, header: true };
        continue;
      }
    }
    yield { cells: dbText ? dbTextCells(raw) : raw.split(delimiter), raw, line };
  }
}

/** Rows of cells of a file in a mapping's dialect; a db_text definition line comes marked as the header. */
export function dialectRows(input: Readable, dialect: Dialect, delimiter: string): AsyncGenerator<CsvCells & { header?: true }> {
  return dialect === 'db' ? dbRows(input, delimiter) : csvCells(input, delimiter);
}
