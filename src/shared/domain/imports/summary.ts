import type { ImportBatchResult } from '../queues/payloads';

/**
 * What an import run did, line by line accounted: lines = accepted + invalid + skipped + paired;
 * accepted = rated + duplicates + refused. Skipped and paired lines come from switch formats
 * (docs/IMPORTS.md, "Switch formats"): rows that are not calls, and the second row of a paired call.
 */
export class Totals {
  lines = 0;
  accepted = 0;
  invalid = 0;
  refused = 0;
  duplicates = 0;
  rated = 0;
  /** Rows of calls that were not answered: not rated, not rejected. */
  unanswered = 0;
  /** Rows that are not calls (another SIP method, a re-INVITE). */
  otherRows = 0;
  /** End rows joined to their begin row's call (the call counts once, as accepted). */
  paired = 0;
  charged = 0n;
  chargedLinked = 0n;
  /** Batches an earlier run had finished (their lines count as duplicates now). */
  replayedBatches = 0;
  batches = 0;

  get rejected(): number {
    return this.invalid + this.refused;
  }

  get skipped(): number {
    return this.unanswered + this.otherRows;
  }

  /** Lines whose outcome is known. */
  get done(): number {
    return this.invalid + this.refused + this.duplicates + this.rated + this.skipped + this.paired;
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
