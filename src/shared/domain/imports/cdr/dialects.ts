import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { badInputReason } from '../../calls/reasons';
import { csvCells, TRUNCATED_ROW, withoutBom, type CsvCells } from '../records';
import type { Dialect } from './mapping';

/**
 * The files Kamailio's and OpenSIPS's text database modules write, read as rows of cells:
 * - db_flatstore: one row per line, values separated by `|` (its `delimiter` parameter), no quoting
 *   and no escapes (db_flatstore.c writes strings as they are; `encode_delimiter` percent-encodes the
 *   delimiter, which is kept as written);
 * - db_text: a first line of column definitions (`id(int,auto) method(string) ...`), then rows
 *   separated by `:` with `\:`, `\\`, `\n`, `\r`, `\t` and `\0` escaped (README of db_text).
 * Told apart by the first line. Lines end in LF (or CRLF); empty lines are skipped and counted; a last
 * line without its end was cut while being written (TRUNCATED_ROW). A later copy of db_text's definition
 * line (files of one table concatenated) is skipped like the first.
 */

/** A db_text column definition: `name(type)` or `name(type,attr)`. */
const DB_TEXT_COLUMN = /^([A-Za-z_][A-Za-z0-9_]*)\((?:int|double|str|string|datetime|blob)(?:,[a-z]+)*\)$/;

/** How a definition line begins (its first column's `name(`), where a db_text row begins with a value and `:`. */
const DEFINITION_START = /^\s*[A-Za-z_][A-Za-z0-9_]*\(/;

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

/** Why a db_text definition line that is not the file's first, and not a copy of it, is rejected. */
export const OTHER_DEFINITION = badInputReason(
  "a db_text column definition line unlike the file's first (a file of another table appended?): not a row; the rows after it are read with the first line's columns",
);

/** A db_text definition line's columns and types, for comparing two. */
const definitionOf = (line: string) => line.trim().split(/\s+/).join(' ');

type DbRow = CsvCells & { header?: true };

async function* dbRows(input: Readable, delimiter: string, lastLineEnd: boolean, knownDefinition: string | null): AsyncGenerator<DbRow> {
  // db_flatstore and db_text end every row with LF: a last line without it was cut while being written,
  // and may still have all its cells (a duration cut short). readline hides whether the last line had its
  // end; the last byte of the input tells.
  let lastByte = -1;
  if (lastLineEnd)
    input.on('data', (chunk: Buffer | string) => {
      if (chunk.length > 0) lastByte = typeof chunk === 'string' ? chunk.charCodeAt(chunk.length - 1) : chunk[chunk.length - 1];
    });
  const lines = createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  /** db_text: the file's definition line (its first, or, for a reject file's record, its header row's). */
  let definition: string | null = knownDefinition === null ? null : definitionOf(knownDefinition);
  let first = knownDefinition === null;
  /** The last row read: sent on when another line follows it, which proves its line end. */
  let held: DbRow | null = null;
  for await (const text of lines) {
    line += 1;
    if (held !== null) yield held;
    held = null;
    const raw = withoutBom(text, line);
    if (raw.trim() === '') continue;
    if (first) {
      first = false;
      const names = dbTextHeader(raw);
      if (names) {
        definition = definitionOf(raw);
        held = { cells: names, raw, line, header: true };
        continue;
      }
    } else if (definition !== null && DEFINITION_START.test(raw) && dbTextHeader(raw)) {
      // db_text files of one table concatenated (to pair rows across them) each begin with the definition.
      if (definitionOf(raw) !== definition) held = { cells: [], raw, line, error: OTHER_DEFINITION };
      continue;
    }
    held = { cells: definition !== null ? dbTextCells(raw) : raw.split(delimiter), raw, line };
  }
  if (held === null) return;
  const ended = !lastLineEnd || lastByte === 0x0a || lastByte === 0x0d;
  yield ended || held.error !== undefined ? held : { ...held, error: TRUNCATED_ROW };
}

/**
 * Rows of cells of a file in a mapping's dialect; a db_text definition line comes marked as the header.
 * `lastLineEnd`: the input is a switch's file, whose last row without its line end is truncated (not a
 * reject file's record, which its cell holds whole). `definition`: the db_text definition line the rows
 * are under when it is not in the input (a reject file's record, under the header row it repeats).
 */
export function dialectRows(
  input: Readable,
  dialect: Dialect,
  delimiter: string,
  lastLineEnd: boolean,
  definition: string | null = null,
): AsyncGenerator<DbRow> {
  return dialect === 'db' ? dbRows(input, delimiter, lastLineEnd, definition) : csvCells(input, { delimiter, ltrim: true, lastLineEnd });
}
