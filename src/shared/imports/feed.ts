import type { Readable } from 'node:stream';
import type { ImportLine } from '../queues/payloads';
import { csvLine, jsonLine } from './line';
import { readRecords, type Format, type SourceRecord } from './records';
import type { BatchSubmitter } from './submit';
import type { Totals } from './summary';

export interface FeedOptions {
  importId: string;
  format: Format;
  /** The import's batch size as stored in `imports` (a rerun keeps the first run's). */
  batchSize: number;
  submitter: BatchSubmitter;
  totals: Totals;
  /** A line that failed validation (already counted as invalid). */
  onInvalid(line: number, reason: string, raw: string): Promise<void>;
  /** A line accepted and about to be sent in its batch. */
  onAccepted?(record: SourceRecord): void;
  /** The file's header row, as it is in the file (a reject file repeats it, so that it imports again). */
  onHeader?(line: number, raw: string): void;
}

/**
 * Reads an import's records, validates each line and sends the valid ones in batches (waiting for room
 * when `maxInFlight` batches are out). Returns once every batch is sent; `submitter.drain()` waits for
 * their results. Throws HeaderError for an unusable CSV header (before anything is sent).
 */
export async function feedRecords(input: Readable, options: FeedOptions): Promise<void> {
  const { importId, format, batchSize, submitter, totals } = options;
  const now = new Date();
  let batchNo = -1;
  let batch: ImportLine[] = [];
  const flush = async () => {
    if (batch.length > 0) await submitter.submit(importId, batchNo, batch);
    batch = [];
  };
  for await (const rec of readRecords(input, format)) {
    if (rec.header) {
      options.onHeader?.(rec.line, rec.raw);
      continue;
    }
    totals.lines += 1;
    const outcome = rec.error
      ? { ok: false as const, reason: rec.error.startsWith('BAD_USER_INPUT') ? rec.error : `BAD_USER_INPUT: ${rec.error}` }
      : format === 'csv'
        ? csvLine(rec.row!, rec.line, now)
        : jsonLine(rec.raw, rec.line, now);
    if (!outcome.ok) {
      totals.invalid += 1;
      await options.onInvalid(rec.line, outcome.reason, rec.raw);
      continue;
    }
    // Batches are cut by position in the file, not by count of accepted lines: the same file always
    // gives the same batches, whatever the validation rules of the version that reads it.
    const n = Math.floor(rec.index / batchSize);
    if (n !== batchNo) {
      await flush();
      batchNo = n;
    }
    totals.accepted += 1;
    options.onAccepted?.(rec);
    batch.push(outcome.line);
  }
  await flush();
}
