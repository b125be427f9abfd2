import type { AppContext } from '../../shared/context';
import type { RatingDataCache } from '../../shared/rating-data/cache';

/** What the transaction processors need: the process context and the in-memory rating data. */
export interface TransactionDeps {
  ctx: AppContext;
  rating: RatingDataCache;
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
  /** The account changed under us too many times in a row; the caller may retry. */
  BUSY: 'BUSY',
} as const;

export type Reason = (typeof Reasons)[keyof typeof Reasons];
