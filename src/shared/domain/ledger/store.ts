import type { Collections } from '../store';

/** The two collections every balance change touches: the account (cached balance) and its ledger. */
export type LedgerStore = Pick<Collections, 'accounts' | 'ledger'>;
