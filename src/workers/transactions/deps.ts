import type { AppContext } from '../../shared/domain/context';
import { withGroupWindow } from '../../shared/infra/group-commands';
import type { RatingDataCache } from '../../shared/domain/rating-data/cache';
import type { ImportAccountCache } from '../imports/account-cache';
import type { DecisionMemory } from './decision-memory';
import type { SettledMarkers } from '../../shared/domain/ledger';
import type { AuthorizationReads } from './authorization-reads';
import type { BegunEntries } from './begun-entries';

/** What the transaction processors need: the process context and the in-memory rating data. */
export interface TransactionDeps {
  ctx: AppContext;
  rating: RatingDataCache;
  /** File import batches' accounts, held per import (worker processes); without it each batch reads its own. */
  importAccounts?: ImportAccountCache;
  /** The decisions this process recorded or read (worker processes); without it each is read from MongoDB. */
  decisions?: DecisionMemory;
  /**
   * Charge markers this process settled, removed by the account's next begin or end (worker processes);
   * without it each charge removes its marker with a command of its own.
   */
  settledMarkers?: SettledMarkers;
  /** Callers read by this process's authorizations, for their begin (worker processes); without it begin reads. */
  authorizationReads?: AuthorizationReads;
  /**
   * The entries of single-party calls this process began, for their end to charge in its own write
   * (end-charge.ts; worker processes that process inline; an end of a call another process began reads
   * its entry instead); without it an end ends, and processing charges.
   */
  begunEntries?: BegunEntries;
  /**
   * The process runs the processing queue too: an end's job charges the entries it ended itself, after
   * answering, instead of queueing them (processor.ts, settleEnded).
   */
  processInline?: boolean;
}

/**
 * The dependencies of the processing queue: with PROCESSING_WINDOW_MS, its grouped commands (account
 * reads, record inserts, ledger entries, marker removals, charged marks) go through collection handles
 * that wait that long for other calls to share them (src/shared/infra/group-commands.ts). Nobody waits on
 * processing: the agent answered end already, so only the processing lag grows (by a few windows).
 */
export function processingDeps(deps: TransactionDeps): TransactionDeps {
  const { mongo, config } = deps.ctx;
  if (config.processingWindowMs <= 0) return deps;
  // One set of handles per process: commands share a window only on the same handles, and an end that
  // charges in its own write asks for them on every call (end-charge.ts).
  let windowed = windowedDeps.get(deps);
  if (!windowed) {
    const collections = withGroupWindow(mongo.db, mongo.collections, config.processingWindowMs);
    windowed = { ...deps, ctx: { ...deps.ctx, mongo: { ...mongo, collections } } };
    windowedDeps.set(deps, windowed);
  }
  return windowed;
}

const windowedDeps = new WeakMap<TransactionDeps, TransactionDeps>();
