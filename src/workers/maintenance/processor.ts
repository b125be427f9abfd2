import { Job, UnrecoverableError } from 'bullmq';
import type { MaintenanceJob } from '../../shared/queues/payloads';
import type { TransactionDeps } from '../transactions/deps';
import { recoverInterrupted, RecoveryResult } from './recover';
import { requeueEndedCalls } from './requeue-ended';
import { scanRunningCalls, ScanResult } from './scan-calls';

/** Housekeeping jobs of the `maintenance` queue. */
export function maintenanceProcessor(deps: TransactionDeps) {
  const { ctx } = deps;
  return async (job: Job<MaintenanceJob>): Promise<ScanResult & RecoveryResult & { requeuedCalls: number }> => {
    switch (job.data.task) {
      case 'scan-long-calls': {
        // The same periodic pass recovers interrupted work (first: it may take back ends), then
        // queues again ended calls left unprocessed.
        const recovered = await recoverInterrupted(deps);
        const result = { ...recovered, ...(await scanRunningCalls(ctx)), requeuedCalls: await requeueEndedCalls(ctx) };
        ctx.logger.debug({ jobId: job.id, ...result }, 'running calls scanned');
        return result;
      }
      default:
        throw new UnrecoverableError(`unknown maintenance task ${JSON.stringify((job.data as { task?: unknown }).task)}`);
    }
  };
}
