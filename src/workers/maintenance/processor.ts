import { Job, UnrecoverableError } from 'bullmq';
import { auditLedger, storeAudit } from '../../shared/domain/ledger/audit';
import type { MaintenanceJob } from '../../shared/domain/queues/payloads';
import type { TransactionDeps } from '../transactions/deps';
import { recoverInterrupted } from './recover';
import { requeueEndedCalls } from './requeue-ended';
import { scanExhaustedCalls, scanRunningCalls } from './scan-calls';
import { sweepExpiredReservations } from '../transactions/reservations';

/** Housekeeping jobs of the `maintenance` queue. */
export function maintenanceProcessor(deps: TransactionDeps) {
  const { ctx } = deps;
  return async (job: Job<MaintenanceJob>): Promise<object> => {
    switch (job.data.task) {
      case 'scan-long-calls': {
        // The same periodic pass recovers interrupted work (first: it may take back ends), then
        // queues again ended calls left unprocessed.
        const recovered = await recoverInterrupted(deps);
        const result = { ...recovered, ...(await scanRunningCalls(ctx)), requeuedCalls: await requeueEndedCalls(ctx) };
        ctx.logger.debug({ jobId: job.id, ...result }, 'running calls scanned');
        return result;
      }
      case 'scan-exhausted-calls': {
        const result = {
          ...(await scanExhaustedCalls(ctx)),
          expiredReservations: await sweepExpiredReservations(ctx.mongo.collections.accounts),
        };
        ctx.logger.debug({ jobId: job.id, ...result }, 'exhausted calls checked');
        return result;
      }
      case 'audit-ledger': {
        const report = await auditLedger(ctx.mongo.collections);
        await storeAudit(ctx.mongo.db, report);
        const figures = { jobId: job.id, ...report, differences: report.differences.length, calls: report.calls.length };
        if (report.differences.length > 0)
          ctx.logger.error(
            { ...figures, accounts: report.differences.map((d) => d.account_tag).slice(0, 20) },
            'ledger audit found differences',
          );
        if (report.calls.length > 0)
          ctx.logger.error({ ...figures, findings: report.calls.slice(0, 20) }, 'ledger audit: calls charged wrongly');
        if (report.differences.length === 0 && report.calls.length === 0) ctx.logger.info(figures, 'ledger audit: no difference');
        return { ...figures };
      }
      default:
        throw new UnrecoverableError(`unknown maintenance task ${JSON.stringify((job.data as { task?: unknown }).task)}`);
    }
  };
}
