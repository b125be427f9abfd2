import type { Totals } from '../../shared/domain/imports/summary';

export { Totals } from '../../shared/domain/imports/summary';

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
    ...(t.skipped > 0
      ? [['skipped', `${t.skipped} (unanswered ${t.unanswered}, other rows ${t.otherRows}): not rated, not rejected`] as [string, string]]
      : []),
    ...(t.paired > 0 ? [['paired', `${t.paired} (end rows joined to their begin row's call)`] as [string, string]] : []),
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
