import { Job, UnrecoverableError } from 'bullmq';
import type { AppContext } from '../../shared/context';
import type { MaintenanceJob } from '../../shared/queues/payloads';
import { scanRunningCalls, ScanResult } from './scan-calls';

/** Housekeeping jobs of the `maintenance` queue. */
export function maintenanceProcessor(ctx: AppContext) {
  return async (job: Job<MaintenanceJob>): Promise<ScanResult> => {
    switch (job.data.task) {
      case 'scan-long-calls': {
        const result = await scanRunningCalls(ctx);
        ctx.logger.debug({ jobId: job.id, ...result }, 'running calls scanned');
        return result;
      }
      default:
        throw new UnrecoverableError(`unknown maintenance task ${JSON.stringify((job.data as { task?: unknown }).task)}`);
    }
  };
}
