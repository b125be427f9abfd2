import type { AppContext } from '../../shared/context';
import { withGroupWindow } from '../../shared/group-commands';
import type { RatingDataCache } from '../../shared/rating-data/cache';
import type { ImportAccountCache } from '../imports/account-cache';

/** What the transaction processors need: the process context and the in-memory rating data. */
export interface TransactionDeps {
  ctx: AppContext;
  rating: RatingDataCache;
  /** File import batches' accounts, held per import (worker processes); without it each batch reads its own. */
  importAccounts?: ImportAccountCache;
}

/**
 * The dependencies of the processing queue: with PROCESSING_WINDOW_MS, its grouped commands (account
 * reads, record inserts, ledger entries, marker removals, charged marks) go through collection handles
 * that wait that long for other calls to share them (src/shared/group-commands.ts). Nobody waits on
 * processing: the agent answered end already, so only the processing lag grows (by a few windows).
 */
export function processingDeps(deps: TransactionDeps): TransactionDeps {
  const { mongo, config } = deps.ctx;
  if (config.processingWindowMs <= 0) return deps;
  const collections = withGroupWindow(mongo.db, mongo.collections, config.processingWindowMs);
  return { ...deps, ctx: { ...deps.ctx, mongo: { ...mongo, collections } } };
}

/** Business refusals; answered as `{ ok: false, reason }`, never as errors. */
export const Reasons = {
  NOT_FOUND: 'NOT_FOUND',
  NOT_ACTIVE: 'NOT_ACTIVE',
  UNREACHABLE_DESTINATION: 'UNREACHABLE_DESTINATION',
  TOO_MANY_RUNNING_TRANSACTIONS: 'TOO_MANY_RUNNING_TRANSACTIONS',
  BALANCE_INSUFFICIENT: 'BALANCE_INSUFFICIENT',
  DUPLICATE_TRANSACTION: 'DUPLICATE_TRANSACTION',
  ALREADY_ENDED: 'ALREADY_ENDED',
  TIMEOUT: 'TIMEOUT',
  /** The store or the queue could not be reached; nothing was applied. */
  UNAVAILABLE: 'UNAVAILABLE',
  /**
   * The agent could neither learn the operation's fate nor record it abandoned within its bound
   * (MongoDB unreachable from the agent): it may or may not have happened. Sent again, the same request
   * answers what did (docs/AGENT.md, "What an answer means").
   */
  OUTCOME_UNKNOWN: 'OUTCOME_UNKNOWN',
  /** The account changed under us too many times in a row; the caller may retry. */
  BUSY: 'BUSY',
} as const;

export type Reason = (typeof Reasons)[keyof typeof Reasons];

/**
 * Margin kept before an agent's deadline: a job must be able to finish its writes and answer before
 * the agent stops waiting, or the caller would be told "timeout" about an operation that did happen.
 * Real-time operations, agent batches and a rollback waiting for an import batch all keep it.
 */
const DEADLINE_MARGIN_MS = 250;

/** Whether work that takes `ms` more can still answer before `deadline` (epoch ms). */
export function beforeDeadline(deadline: number, ms = 0): boolean {
  return Date.now() + ms + DEADLINE_MARGIN_MS <= deadline;
}
