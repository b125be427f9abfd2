import { importBatchesOf, timedOutBatchResult } from '../../shared/domain/ledger';
import type { ImportLine } from '../../shared/domain/queues/payloads';
import type { ImportBatchResult } from '../../shared/domain/queues/payloads';
import type { TransactionDeps } from '../transactions/deps';
import { refundRecord } from '../transactions/refund';

/**
 * Takes back an agent batch that was abandoned (its caller was answered TIMEOUT or UNAVAILABLE): each
 * of its records is refunded, as a rollback would (once per record: \`refund:<_id>\`, only if its batch
 * debit is in the ledger), and deleted; then the batch's result says every line timed out, so that a
 * rollback waiting on it stops waiting and a resubmission records the calls afresh.
 */
export async function undoAgentBatch(
  deps: TransactionDeps,
  batchId: string,
  lines: ReadonlyArray<Pick<ImportLine, 'line'>>,
): Promise<ImportBatchResult> {
  const { transactions } = deps.ctx.mongo.collections;
  for (const record of await transactions.find({ charge_op: batchId }).toArray()) await refundRecord(deps, record);
  const result = timedOutBatchResult(batchId, lines);
  await importBatchesOf(deps.ctx.mongo.db).updateOne(
    { _id: batchId },
    { $set: { result, job_timestamp: 0, finished_at: new Date(), decided_at: new Date() } },
  );
  deps.ctx.logger.warn({ batch: batchId }, 'agent batch abandoned by its deadline: its records taken back');
  return result;
}
