import type { ImportBatchResult } from '../../shared/queues/payloads';

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

export interface SummaryContext {
  importId: string;
  source: string;
  format: string;
  batchSize: number;
  rejectsPath: string | null;
  seconds: number;
  peakRssBytes: number;
}

export function formatSummary(t: Totals, c: SummaryContext): string {
  const rows: Array<[string, string]> = [
    ['import', `${c.importId} (${c.source}, ${c.format}, batch size ${c.batchSize})`],
    ['lines', String(t.lines)],
    ['accepted', String(t.accepted)],
    ['rejected', `${t.rejected} (invalid ${t.invalid}, refused ${t.refused})${c.rejectsPath ? ` -> ${c.rejectsPath}` : ''}`],
    ['duplicates', String(t.duplicates) + (t.replayedBatches > 0 ? ` (${t.replayedBatches} batches finished by an earlier run)` : '')],
    ['rated', String(t.rated)],
    ['charged', t.charged.toString() + (t.chargedLinked > 0n ? ` (linked accounts: ${t.chargedLinked})` : '')],
    ['time', `${c.seconds.toFixed(1)} s (${Math.round(t.lines / Math.max(c.seconds, 0.001))} lines/s)`],
    ['peak memory', `${Math.round(c.peakRssBytes / 1048576)} MB`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length)) + 1;
  return rows.map(([k, v]) => `${`${k}:`.padEnd(width)} ${v}`).join('\n');
}
