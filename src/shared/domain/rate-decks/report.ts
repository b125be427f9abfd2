/** What a rate deck run did, as the CLI prints it and the HTTP route answers it. */

export interface RejectedLine {
  /** 1-based line of the deck (the header is line 1). */
  line: number;
  /** `CODE: field: problem`, as the API words its errors. */
  reason: string;
}

export interface DeckReport {
  // Each count is of rates: a prefix with a timing (peak, weekend) is a rate of its own beside the untimed one.
  /** Rates without a document before: inserted, valid from the effective time on. */
  added: number;
  /** Rates whose terms at the effective time differed: the old version ends there, the new one starts there. */
  changed: number;
  /** Rates whose version valid at the effective time already had the deck's terms and no end: not written. */
  unchanged: number;
  /** Rates of the pricelist and carrier missing from the deck that were valid at or after the effective time: their validity ends there. */
  removed: number;
  /** Present when the run removed nothing because a line could not be read at all (which prefixes the deck names is unknown): why. */
  removals_skipped?: string;
  /** The first rejected lines (1000 unless asked otherwise), in deck order. */
  rejected: RejectedLine[];
  /** Every rejected line, kept or not. */
  rejected_count: number;
  /** Data lines read (the header not counted). */
  lines: number;
  dry_run: boolean;
  /** The effective time, ISO 8601 UTC. */
  effective: string;
}

export interface DeckProgress {
  phase: 'deck' | 'removals' | 'done';
  lines: number;
  added: number;
  changed: number;
  unchanged: number;
  removed: number;
  rejected: number;
}

export function emptyReport(effective: Date, dryRun: boolean): DeckReport {
  return {
    added: 0,
    changed: 0,
    unchanged: 0,
    removed: 0,
    rejected: [],
    rejected_count: 0,
    lines: 0,
    dry_run: dryRun,
    effective: effective.toISOString(),
  };
}

/** The CLI's last line: `rates import: 3 added, 1 changed, 10 unchanged, 2 removed, 0 rejected`. */
export function summaryLine(r: Pick<DeckReport, 'added' | 'changed' | 'unchanged' | 'removed' | 'rejected_count'>): string {
  return `rates import: ${r.added} added, ${r.changed} changed, ${r.unchanged} unchanged, ${r.removed} removed, ${r.rejected_count} rejected`;
}
