import type { Job } from 'bullmq';
import type { ImportBatchJob, ImportBatchResult } from '../../shared/queues/payloads';
import { beforeDeadline, TransactionDeps } from '../transactions/deps';
import { processImportBatch } from './batch';
import { importBatchId, timedOutBatchResult } from '../../shared/ledger';

/**
 * The `imports` queue: batches of finished calls (CDR files, recordTransactions). The result is the
 * job's return value; file imports also keep it in MongoDB (see registry.ts).
 */
export function importProcessor(deps: TransactionDeps) {
  return async (job: Job<ImportBatchJob>): Promise<ImportBatchResult> => {
    const data = job.data;
    // Only a batch that has not started may be dropped: a retry of one that crashed midway must finish
    // it (its records may be written already), even if the caller has stopped waiting.
    const firstStart = job.attemptsMade === 0 && (job.attemptsStarted ?? 1) <= 1;
    if (data.deadline !== null && firstStart && !beforeDeadline(data.deadline)) {
      deps.ctx.logger.warn({ jobId: job.id }, 'import batch dropped: past its deadline');
      return timedOutBatchResult(importBatchId(data.import_id, data.batch), data.lines);
    }
    return processImportBatch(deps, data, job.timestamp);
  };
}
