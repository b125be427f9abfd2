import type { Filter } from 'mongodb';
import type { OutcomeDoc } from '../../shared/domain/calls/decisions';
import { UNDONE_ROLLBACKS, UNSETTLED_RECORDS, type Collections } from '../../shared/domain/store';
import type { ImportBatchDoc } from '../../shared/domain/ledger/batches';
import { exists } from './documents';

/**
 * What still moves money for an account, which its deletion waits for (docs/OPERATIONS.md, "Deleting
 * accounts"): every balance change finds its account by tag, so work finished after the deletion would
 * find no account, or the next customer given the same tag. Null when nothing is under way. Each check
 * is an indexed read. Not seen: an import batch running at this moment (its records are written before
 * its result; docs/OPERATIONS.md says so).
 */
export async function workUnderWay(collections: Collections, accountTag: string): Promise<string | null> {
  if (await exists(collections.transactions, { account_tag: accountTag, ...UNSETTLED_RECORDS }))
    return 'one of its calls is still being charged or refunded';
  // A rerating's intent is finished against the account found by tag (docs/RERATING.md).
  if (await exists(collections.transactions, { account_tag: accountTag, rerate: { $ne: null } }))
    return 'one of its calls is being rerated';
  const rollbackPending: Filter<OutcomeDoc> = { ...UNDONE_ROLLBACKS, 'targets.account_tag': accountTag };
  if (await exists(collections.outcomes, rollbackPending)) return 'a rollback answered ok is not carried out on it yet';
  const batches = collections.importBatches;
  if (await exists(batches, { settle_pending: true, 'debits.account_tag': accountTag } as Filter<ImportBatchDoc>))
    return 'an import batch that charges it is not settled yet';
  // A settlement not finished keeps `settle_pending` (settlements.ts): the sparse index finds the few.
  for await (const settlement of batches.find(
    { settle_pending: true, members: { $exists: true } },
    { projection: { _id: 1, members: 1 } },
  )) {
    const charges = { _id: { $in: settlement.members ?? [] }, settled_by: settlement._id, 'debits.account_tag': accountTag };
    if (await exists(batches, charges as Filter<ImportBatchDoc>)) return 'an import settlement that charges it is not finished yet';
  }
  return null;
}
