import type { Job } from 'bullmq';
import { isRerateJob, isSettlementJob, type ImportBatchResult, type ImportJob } from '../../shared/domain/queues/payloads';
import { processRerateBatch, type RerateBatchResult } from '../rerating/batch';
import { TransactionDeps } from '../transactions/deps';
import { beforeDeadline } from '../../shared/domain/calls';
import { processImportBatch } from './batch';
import { phaseClock } from '../../shared/infra/phase-clock';
import { importBatchId, settleImportBatches, timedOutBatchResult, type SettlementResult } from '../../shared/domain/ledger';

/**
 * The `imports` queue: batches of finished calls (CDR files, recordTransactions), the settlements
 * of file batches' debits, and the batches of rerating runs (src/workers/rerating). The result is the job's return value; file imports also keep it in MongoDB
 * (import_batches).
 */
export function importProcessor(deps: TransactionDeps) {
  return async (job: Job<ImportJob>): Promise<ImportBatchResult | SettlementResult | RerateBatchResult> => {
    const data = job.data;
    if (isRerateJob(data)) return processRerateBatch(deps, data);
    if (isSettlementJob(data)) {
      const clock = phaseClock();
      const result = await settleImportBatches(
        deps.ctx.mongo.collections,
        deps.ctx.mongo.db,
        data.settlement_id,
        data.import_id,
        data.batches,
        (phase) => clock.lap(phase),
      );
      deps.ctx.logger.debug({ jobId: job.id, ...result, phase_ms: clock.phases }, 'import batches settled');
      return result;
    }
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
