import { BoundedMap } from '../../shared/infra/bounded-map';
import type { RunningTransaction } from '../../shared/domain/types';

/**
 * The running entries of single-party calls this process began, kept for their end (issue 36: the end
 * charges in its own write, end-charge.ts, which needs the entry's rate and start without reading the
 * account). Safe because what the end rates from never changes after begin (the rate, the start and
 * the call's facts; only the end's own fields are set later), and the charging write is guarded by
 * exactly that entry, in progress and decided by its begin: a kept entry that is no longer so makes
 * the write miss, and the end is decided as before on what MongoDB holds. Taken once, at the end.
 * Bounded: the oldest calls are forgotten first; losing them (a restart, another worker process taking
 * the end) costs the end one read of the entry (end.ts, readEntryToCharge), nothing else.
 */
export class BegunEntries {
  private readonly entries: BoundedMap<string, { accountTag: string; entry: RunningTransaction }>;

  constructor(capacity = 20_000) {
    this.entries = new BoundedMap(capacity);
  }

  remember(accountTag: string, entry: RunningTransaction): void {
    this.entries.set(entry.call_id, { accountTag, entry });
  }

  /** The entry this process began for the call on `accountTag`, once. */
  take(accountTag: string, callId: string): RunningTransaction | undefined {
    const found = this.entries.get(callId);
    if (!found || found.accountTag !== accountTag) return undefined;
    this.entries.delete(callId);
    return found.entry;
  }
}
