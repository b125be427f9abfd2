import type { UpdateFilter } from 'mongodb';
import type { AccountDoc } from '../types';
import { BoundedMap } from '../../infra/bounded-map';

/**
 * Markers this process has settled (their ledger entry written) but not yet removed from their account
 * (issue 36: a charge's marker removal was a command of its own). Removal is then carried by the
 * account's next begin or end write from this process (`pullUpdate`), a command the call makes anyway;
 * an account with no next call keeps its markers until the recovery sweep settles them (`settleMarkers`,
 * which writes the entry again as a duplicate and pulls them). Removing a marker is safe at any time
 * after its entry exists (docs/ARCHITECTURE.md, "Money movements"), so what is remembered here can only
 * delay a removal, never make a wrong one; losing it (a restart) leaves the removals to the sweep.
 * Bounded: the accounts least recently charged are forgotten first.
 */
export class SettledMarkers {
  private readonly byAccount: BoundedMap<string, string[]>;

  constructor(capacity = 100_000) {
    this.byAccount = new BoundedMap(capacity);
  }

  /** The marker `op` of `accountTag` has its ledger entry: it may be pulled by any later write. */
  add(accountTag: string, op: string): void {
    const ops = this.byAccount.get(accountTag);
    if (ops) {
      ops.push(op);
      return;
    }
    this.byAccount.set(accountTag, [op]);
  }

  /**
   * The part of an update of `accountTag` that pulls its settled markers (`{}` when there are none),
   * and `done`, to call once that update was applied.
   */
  pullUpdate(accountTag: string): { update: UpdateFilter<AccountDoc>; done: () => void } {
    const ops = this.byAccount.get(accountTag);
    if (!ops || ops.length === 0) return { update: {}, done: () => undefined };
    const taken = [...ops];
    return {
      update: { $pull: { ledger_pending: { op: { $in: taken } } } } as UpdateFilter<AccountDoc>,
      done: () => {
        const left = (this.byAccount.get(accountTag) ?? []).filter((op) => !taken.includes(op));
        if (left.length > 0) this.byAccount.set(accountTag, left);
        else this.byAccount.delete(accountTag);
      },
    };
  }
}
