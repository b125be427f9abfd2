import type { AppContext } from '../../shared/domain/context';
import { AnnouncedVersion } from '../../shared/infra/announced-version';
import type { Collections } from '../../shared/domain/store';
import { loadAccounts, type BatchAccount } from './accounts';

/** How often the settings version is re-read without an announcement (as rating data's). */
const VERSION_RECHECK_MS = 5_000;
/** Accounts are read again at least this often during a long import, announced or not. */
export const IMPORT_ACCOUNTS_MAX_AGE_MS = 60_000;

interface ImportAccounts {
  version: string;
  readAt: number;
  usedAt: number;
  accounts: Map<string, BatchAccount>;
}

/**
 * The accounts a worker's file batches rate against, kept per import so a batch of 1000 calls does not
 * read its few hundred accounts again (issue 12: the account reads were a fifth of an import's time).
 * What a batch sees is what a per-batch read would have seen, give or take:
 *  - a change made through the API (update, rename, deactivation, links, deletion) is announced over
 *    Redis (src/shared/infra/announced-version.ts, 'account-settings') and every batch that starts after the
 *    announcement reads the accounts again;
 *  - any other change (a hand edit in the database, an announcement lost with Redis) is seen within
 *    IMPORT_ACCOUNTS_MAX_AGE_MS;
 *  - each import starts with nothing cached, and an account not found is not remembered.
 * Only file batches use it: they leave their debits to a settlement, so they need no balance nor debit
 * state, which change with every call. Agent batches read their accounts each time.
 */
export class ImportAccountCache {
  private readonly imports = new Map<string, ImportAccounts>();

  constructor(
    private readonly version: Pick<AnnouncedVersion, 'current' | 'close'>,
    private readonly maxAgeMs = IMPORT_ACCOUNTS_MAX_AGE_MS,
  ) {}

  static async start(
    ctx: Pick<AppContext, 'redis' | 'config' | 'newRedis'>,
    maxAgeMs = IMPORT_ACCOUNTS_MAX_AGE_MS,
  ): Promise<ImportAccountCache> {
    return new ImportAccountCache(await AnnouncedVersion.start(ctx, 'account-settings', VERSION_RECHECK_MS), maxAgeMs);
  }

  /** The accounts of `tags` and their linked accounts, without debit state: from memory, reading those it lacks. */
  async accountsFor(
    accounts: Collections['accounts'],
    importId: string,
    tags: Iterable<string>,
  ): Promise<ReadonlyMap<string, BatchAccount>> {
    const version = await this.version.current();
    const now = Date.now();
    this.forgetIdle(now);
    let held = this.imports.get(importId);
    if (!held || held.version !== version || now - held.readAt >= this.maxAgeMs) {
      held = { version, readAt: now, usedAt: now, accounts: new Map() };
      this.imports.set(importId, held);
    }
    held.usedAt = now;
    const found = await loadAccounts(accounts, tags, false, held.accounts);
    // Kept only if nothing replaced this import's accounts meanwhile (a concurrent batch saw a newer version).
    if (this.imports.get(importId) === held) for (const [tag, account] of found) held.accounts.set(tag, account);
    return found;
  }

  /** Imports no batch used for the maximum age are over (or paused): their accounts are dropped. */
  private forgetIdle(now: number): void {
    for (const [importId, held] of this.imports) if (now - held.usedAt >= this.maxAgeMs) this.imports.delete(importId);
  }

  async close(): Promise<void> {
    await this.version.close();
  }
}
