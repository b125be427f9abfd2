import type { AccountDoc } from '../../shared/domain/types';
import { BoundedMap } from '../../shared/infra/bounded-map';

/**
 * The caller accounts this process's authorizations read, kept for the begin of the same call (issue
 * 36: begin read the account again, a command of its own, a moment after authorization read it).
 *
 * Safe because a begin never decides anything from a kept account but the one thing its write checks
 * again: the entry's insert is conditional on the account's `rev` being the one kept, and every change
 * of an account bumps `rev` (calls, balance changes, the management API, reservations). So the insert
 * succeeds only on exactly the account authorization read. Any other path (a refusal, another entry of
 * the call, a reservation to take over, spend limits to read, a write that missed) is decided on an
 * account read afresh, as before (begin.ts, tryBegin). Only single-party calls are kept (caller without
 * linked accounts, no receiver), and only when authorization wrote nothing to the account.
 *
 * A kept account is taken once (a begin sent again reads afresh) and forgotten after `ttlMs`: a
 * call rings for seconds, and an account busy enough to change in between only costs the missed write
 * (accounts that missed are not kept for a while). Bounded: the oldest are forgotten first. Losing
 * them (a restart, another worker process running the begin) costs the read they save, nothing else.
 */
export class AuthorizationReads {
  private readonly kept: BoundedMap<string, { account: AccountDoc; until: number }>;
  /** Accounts whose kept read turned out changed by their begin: busy, not worth keeping for a while. */
  private readonly busy: BoundedMap<string, number>;

  constructor(
    private readonly ttlMs = 60_000,
    capacity = 20_000,
  ) {
    this.kept = new BoundedMap(capacity);
    this.busy = new BoundedMap(capacity);
  }

  keep(account: AccountDoc, now = Date.now()): void {
    const busyUntil = this.busy.get(account.account_tag);
    if (busyUntil !== undefined) {
      if (busyUntil > now) return;
      this.busy.delete(account.account_tag);
    }
    // Deleted first, so that a kept account moves to the newest.
    this.kept.delete(account.account_tag);
    this.kept.set(account.account_tag, { account, until: now + this.ttlMs });
  }

  /** The account as authorization read it, once; undefined when not kept or too old. */
  take(accountTag: string, now = Date.now()): AccountDoc | undefined {
    const found = this.kept.get(accountTag);
    if (!found) return undefined;
    this.kept.delete(accountTag);
    return found.until > now ? found.account : undefined;
  }

  /** The kept read of this account was out of date at its begin: do not keep its reads for a while. */
  changed(accountTag: string, now = Date.now()): void {
    this.busy.set(accountTag, now + this.ttlMs);
  }
}
