import type { ImportBatchResult } from '../queues/payloads';

/** What an import run did, line by line accounted: lines = accepted + invalid; accepted = rated + duplicates + refused. */
export class Totals {
  lines = 0;
  accepted = 0;
  invalid = 0;
  refused = 0;
  duplicates = 0;
  rated = 0;
  charged = 0n;
  chargedLinked = 0n;
  /** Batches an earlier run had finished (their lines count as duplicates now). */
  replayedBatches = 0;
  batches = 0;

  get rejected(): number {
    return this.invalid + this.refused;
  }

  /** Lines whose outcome is known. */
  get done(): number {
    return this.invalid + this.refused + this.duplicates + this.rated;
  }

  add(result: ImportBatchResult): void {
    this.batches += 1;
    this.refused += result.refused.length;
    if (result.replayed) {
      this.replayedBatches += 1;
      this.duplicates += result.rated + result.duplicate_lines.length;
      return;
    }
    this.rated += result.rated;
    this.duplicates += result.duplicate_lines.length;
    this.charged += BigInt(result.charged);
    this.chargedLinked += BigInt(result.charged_linked);
  }
}
