import type { Readable } from 'node:stream';
import type { ImportLine } from '../queues/payloads';
import { badInputReason, isBadInputReason } from '../calls/reasons';
import { callInput, withColumn, type CallParts, type CdrFormat } from './cdr/rows';
import { cdrRows } from './cdr/read';
import { Pairing } from './cdr/pairing';
import type { Instants } from './cdr/times';
import { checked, csvLine, jsonLine, type LineOutcome } from './line';
import { readRecords, type Format, type SourceRecord } from './records';
import type { BatchSubmitter } from './submit';
import type { Totals } from './summary';

export interface FeedOptions {
  importId: string;
  format: Format;
  /** A switch's format (`--format asterisk`, `--map FILE`): read instead of `format`. */
  cdr?: CdrFormat;
  /** The import's batch size as stored in `imports` (a rerun keeps the first run's). */
  batchSize: number;
  submitter: BatchSubmitter;
  totals: Totals;
  /** A line that failed validation (already counted as invalid). */
  onInvalid(line: number, reason: string, raw: string): Promise<void>;
  /** A line accepted and about to be sent in its batch. */
  onAccepted?(record: Pick<SourceRecord, 'line' | 'raw'>): void;
  /** The file's header row, as it is in the file (a reject file repeats it, so that it imports again). */
  onHeader?(line: number, raw: string): void;
}

/** Sends accepted lines in batches cut by position in the file. */
class Batches {
  private batchNo = -1;
  private batch: ImportLine[] = [];

  constructor(private readonly options: FeedOptions) {}

  /**
   * Batches are cut by position in the file, not by count of accepted lines: the same file always
   * gives the same batches, whatever the validation rules of the version that reads it.
   */
  async add(index: number, line: ImportLine): Promise<void> {
    const n = Math.floor(index / this.options.batchSize);
    if (n !== this.batchNo) {
      await this.flush();
      this.batchNo = n;
    }
    this.batch.push(line);
  }

  async flush(): Promise<void> {
    if (this.batch.length > 0) await this.options.submitter.submit(this.options.importId, this.batchNo, this.batch);
    this.batch = [];
  }
}

/**
 * Reads an import's records, validates each line and sends the valid ones in batches (waiting for room
 * when `maxInFlight` batches are out). Returns once every batch is sent; `submitter.drain()` waits for
 * their results. Throws HeaderError for an unusable CSV header (before anything is sent).
 */
export async function feedRecords(input: Readable, options: FeedOptions): Promise<void> {
  if (options.cdr) return feedCdr(input, options.cdr, options);
  const { format, totals } = options;
  const now = new Date();
  const batches = new Batches(options);
  for await (const rec of readRecords(input, format)) {
    if (rec.header) {
      options.onHeader?.(rec.line, rec.raw);
      continue;
    }
    totals.lines += 1;
    const outcome = rec.error
      ? { ok: false as const, reason: isBadInputReason(rec.error) ? rec.error : badInputReason(rec.error) }
      : format === 'csv'
        ? csvLine(rec.row!, rec.line, now)
        : jsonLine(rec.raw, rec.line, now);
    if (!outcome.ok) {
      totals.invalid += 1;
      await options.onInvalid(rec.line, outcome.reason, rec.raw);
      continue;
    }
    totals.accepted += 1;
    options.onAccepted?.(rec);
    await batches.add(rec.index, outcome.line);
  }
  await batches.flush();
}

interface RowAt {
  line: number;
  raw: string;
}

/**
 * A switch's file (src/shared/domain/imports/cdr): each data row is a call, a row that is not one (skipped
 * and counted), or half of a call whose other row it waits for (pairs). A paired call goes to the
 * batch of the row that completes it, under the line of its begin row, with both rows as its text.
 */
async function feedCdr(input: Readable, cdr: CdrFormat, options: FeedOptions): Promise<void> {
  const { totals } = options;
  const now = new Date();
  const batches = new Batches(options);
  const pairing = new Pairing<RowAt>();
  const invalid = async (line: number, reason: string, raw: string) => {
    totals.invalid += 1;
    await options.onInvalid(line, reason, raw);
  };
  const accept = async (index: number, at: RowAt, parts: CallParts, end: Instants | null) => {
    const call = callInput(parts, end);
    const outcome: LineOutcome = typeof call === 'string' ? { ok: false, reason: call } : checked(call, at.line, now);
    if (!outcome.ok) return invalid(at.line, withColumn(outcome.reason, parts.columns), at.raw);
    totals.accepted += 1;
    options.onAccepted?.(at);
    await batches.add(index, outcome.line);
  };
  for await (const row of cdrRows(input, cdr)) {
    if (row.header) {
      if (!row.repeated) options.onHeader?.(row.line, row.raw);
      continue;
    }
    totals.lines += 1;
    if (row.error !== undefined) {
      await invalid(row.line, isBadInputReason(row.error) ? row.error : badInputReason(row.error), row.raw);
      continue;
    }
    const outcome = cdr.row(row.cells!, row.layout!);
    switch (outcome.kind) {
      case 'skip':
        if (outcome.why === 'unanswered') totals.unanswered += 1;
        else totals.otherRows += 1;
        break;
      case 'invalid':
        await invalid(row.line, outcome.reason, row.raw);
        break;
      case 'call':
        await accept(row.index, row, outcome.parts, null);
        break;
      case 'leg': {
        const paired = pairing.add(outcome.leg, { line: row.line, raw: row.raw });
        if (paired === 'repeat') totals.otherRows += 1;
        else if (paired !== null) {
          totals.paired += 1;
          const { begin, end } = paired;
          const [a, b] = begin.row.line <= end.row.line ? [begin.row, end.row] : [end.row, begin.row];
          await accept(row.index, { line: begin.row.line, raw: `${a.raw}\n${b.raw}` }, begin.leg.parts!, end.leg.end);
        }
        break;
      }
    }
  }
  await batches.flush();
  const pairs = cdr.mapping.pairs!;
  for (const { leg, row } of pairing.leftovers()) {
    const [mine, other] = leg.role === 'begin' ? [pairs.begin, pairs.end] : [pairs.end, pairs.begin];
    const article = /^[aeiou]/i.test(mine) ? 'an' : 'a';
    await invalid(row.line, badInputReason(`${article} ${mine} row without its ${other} row (Call-ID ${leg.callid}): not rated`), row.raw);
  }
}
