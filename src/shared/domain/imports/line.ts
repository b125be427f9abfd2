import { validateRecordLine, type Input } from './validate-record';
import { ServiceError } from '../../infra/errors';
import type { ImportLine } from '../queues/payloads';
import { csvHeaderProblems } from '../validation/csv-header';

export const REQUIRED_COLUMNS = ['transaction_tag', 'account_tag', 'source', 'destination', 'timestamp_begin', 'timestamp_end'] as const;
export const OPTIONAL_COLUMNS = ['timestamp_auth', 'source_ip', 'carrier_ip', 'tags', 'destination_account_tag'] as const;
const KNOWN = new Set<string>([...REQUIRED_COLUMNS, ...OPTIONAL_COLUMNS]);
const TEXT_FIELDS = new Set<string>([...KNOWN].filter((c) => c !== 'tags'));
/** Text fields whose spelling is their meaning (names, numbers dialled, addresses), unlike a timestamp's. */
const EXACT_FIELDS = new Set<string>([...TEXT_FIELDS].filter((c) => !c.startsWith('timestamp_')));

/** The header's problems against this kind's columns; empty when usable. */
export function headerProblems(columns: readonly string[]): string[] {
  return csvHeaderProblems(columns, REQUIRED_COLUMNS, OPTIONAL_COLUMNS);
}

/** `a;b|c` -> ['a', 'b', 'c']; an empty cell is no tags. */
export function splitTags(value: string): string[] | null {
  const tags = value
    .split(/[;|]/)
    .map((t) => t.trim())
    .filter((t) => t !== '');
  return tags.length > 0 ? tags : null;
}

export type LineOutcome = { ok: true; line: ImportLine } | { ok: false; reason: string };

/** Validates a call as recordTransaction does: its batch line, or the reason it is refused. */
export function checked(input: Input, line: number, now: Date): LineOutcome {
  try {
    return { ok: true, line: validateRecordLine(input, line, now) };
  } catch (err) {
    if (err instanceof ServiceError) return { ok: false, reason: `${err.code}: ${err.message}` };
    throw err;
  }
}

/**
 * A CSV row (column -> cell text). Cells are trimmed; an empty cell is an absent value; `tags` is split
 * on ';' or '|'. Validation is recordTransaction's own (validate.record).
 */
export function csvLine(row: Record<string, string | undefined>, line: number, now: Date): LineOutcome {
  const input: Input = {};
  for (const [column, raw] of Object.entries(row)) {
    const value = raw?.trim() ?? '';
    if (value === '') continue;
    input[column] = column === 'tags' ? splitTags(value) : value;
  }
  return checked(input, line, now);
}

/**
 * A JSON-lines record: an object with the same fields. Numbers are accepted for text fields (switches
 * often export numbers as numbers); `tags` may be a list or a ';'/'|'-separated string. A name or a
 * number dialled given as a JSON number must be a whole number below 2^53: any other is parsed to a
 * double whose text is not what the file says (Asterisk uniqueids 1774717331.20 and 1774717331.2 are one
 * number), and two calls would share a transaction tag. A timestamp's value is what counts, not its text.
 */
export function jsonLine(text: string, line: number, now: Date): LineOutcome {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `BAD_USER_INPUT: not valid JSON (${(err as Error).message})` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, reason: 'BAD_USER_INPUT: a line must be a JSON object' };
  const input: Input = {};
  for (const [field, v] of Object.entries(value as Record<string, unknown>)) {
    if (!KNOWN.has(field)) return { ok: false, reason: `BAD_USER_INPUT: ${field}: unknown field` };
    if (EXACT_FIELDS.has(field) && typeof v === 'number' && !Number.isSafeInteger(v))
      return {
        ok: false,
        reason: `BAD_USER_INPUT: ${field}: a JSON number is read as written only when it is a whole number below 2^53; quote it`,
      };
    if (TEXT_FIELDS.has(field) && typeof v === 'number' && Number.isFinite(v)) input[field] = String(v);
    else if (field === 'tags' && typeof v === 'string') input[field] = splitTags(v);
    else input[field] = v;
  }
  return checked(input, line, now);
}
