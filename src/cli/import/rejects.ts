import { createWriteStream, WriteStream } from 'node:fs';
import { once } from 'node:events';
import { HEADER_ROW_REASON, REJECTS_HEADER } from '../../shared/domain/imports';

function csvCell(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/**
 * The reject file: CSV `line,reason,record`, the record exactly as it was in the input (every line of
 * it), created on the first reject only. Lines refused by a worker arrive when their batch finishes,
 * so rows are not in line order. When the input has a header row, the first row after the columns is
 * that header (reason HEADER_ROW_REASON): corrected in place, the file imports again as it is
 * (`rating import FILE.rejects.csv`, src/shared/domain/imports/records.ts), each record under its first line.
 */
export class RejectWriter {
  private out: WriteStream | undefined;
  private header: { line: number; raw: string } | undefined;
  /** Rejected records written (the header row apart). */
  count = 0;

  constructor(readonly path: string) {}

  /** The input's header row: written first, before the first reject. */
  setHeader(line: number, raw: string): void {
    this.header = { line, raw };
  }

  async write(line: number, reason: string, record: string): Promise<void> {
    if (!this.out) {
      this.out = createWriteStream(this.path, { flags: 'w' });
      this.out.write(`${REJECTS_HEADER}\n`);
      if (this.header) this.out.write(`${this.header.line},${csvCell(HEADER_ROW_REASON)},${csvCell(this.header.raw)}\n`);
    }
    this.count += 1;
    if (!this.out.write(`${line},${csvCell(reason)},${csvCell(record)}\n`)) await once(this.out, 'drain');
  }

  async close(): Promise<void> {
    if (!this.out) return;
    this.out.end();
    await once(this.out, 'finish');
  }
}
