import { createHash, type Hash } from 'node:crypto';
/**
 * The default import id: a hash of the format and the content, so the same file in the same format is
 * the same import (a rerun or a second upload resumes it, docs/IMPORTS.md). `update` the hasher with the
 * content as it streams by, then `id()`. The format is `csv` or `jsonl`, or a switch format's key
 * (CdrFormat.key: its mapping and time zone, since the same file read another way is other calls).
 */
export class ContentId {
  private readonly hash: Hash;

  constructor(format: string) {
    this.hash = createHash('sha256').update(`${format}\n`);
  }

  update(chunk: Buffer): this {
    this.hash.update(chunk);
    return this;
  }

  id(): string {
    return `f${this.hash.digest('hex').slice(0, 24)}`;
  }
}
