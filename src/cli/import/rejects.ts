import { createWriteStream, WriteStream } from 'node:fs';
import { once } from 'node:events';

function csvCell(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/**
 * The reject file: CSV `line,reason,record` (the record as it was in the input), created on the first
 * reject only. Lines refused by a worker arrive when their batch finishes, so rows are not in line order.
 */
export class RejectWriter {
  private out: WriteStream | undefined;
  count = 0;

  constructor(readonly path: string) {}

  async write(line: number, reason: string, record: string): Promise<void> {
    if (!this.out) {
      this.out = createWriteStream(this.path, { flags: 'w' });
      this.out.write('line,reason,record\n');
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
