import type { RunningTransaction, TransactionDoc } from '../../shared/domain/types';
import { fateOf, type Fate } from './decide';
import type { TransactionDeps } from './deps';

/**
 * Whether the begin that made a running entry stands (issue 31, defect 4): an end, a record or a second
 * begin that finds the entry must not treat it as a call unless its begin is decided 'done'. An entry
 * with no begin job is settled (the recovery sweep cleared it once the decision was 'done', or an older
 * version wrote it). 'unknown': the begin is still in flight past the asker's own deadline.
 */
export function beginFate(deps: TransactionDeps, entry: RunningTransaction, accountTag: string, deadline: number): Promise<Fate> {
  if (!entry.begin_job || entry.begin_decided) return Promise.resolve('done');
  return fateOf(
    deps,
    {
      jobId: entry.begin_job,
      deadline: entry.begin_deadline,
      op: 'begin',
      account_tag: entry.origin_account_tag,
      transaction_tag: entry.transaction_tag,
      share: { account_tag: accountTag, entry_id: entry.id },
    },
    deadline,
  );
}

/**
 * Whether the recordTransaction that wrote a record still being charged (`pending`, with its job) stands:
 * 'done' once that job is decided 'done' with this record among what it made, 'abandoned' if it was not,
 * 'unknown' while it is still in flight past the asker's own deadline.
 */
export function recordFate(
  deps: TransactionDeps,
  record: Pick<TransactionDoc, '_id' | 'account_tag' | 'origin_account_tag' | 'transaction_tag' | 'record_job' | 'record_deadline'>,
  deadline: number,
): Promise<Fate> {
  if (!record.record_job) return Promise.resolve('done');
  return fateOf(
    deps,
    {
      jobId: record.record_job,
      deadline: record.record_deadline,
      op: 'record',
      account_tag: record.origin_account_tag ?? record.account_tag,
      transaction_tag: record.transaction_tag,
      share: { account_tag: record.account_tag, record_id: record._id },
    },
    deadline,
  );
}
