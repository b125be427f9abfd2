import { Job, UnrecoverableError } from 'bullmq';
import type { AppContext } from '../../shared/context';
import type { MaintenanceJob } from '../../shared/queues/payloads';
import { requeueEndedCalls } from './requeue-ended';
import { scanRunningCalls, ScanResult } from './scan-calls';

/** Housekeeping jobs of the `maintenance` queue. */
export function maintenanceProcessor(ctx: AppContext) {
  return async (job: Job<MaintenanceJob>): Promise<ScanResult & { requeuedCalls: number }> => {
    switch (job.data.task) {
      case 'scan-long-calls': {
        // The same periodic pass over running calls also recovers ended calls left unprocessed.
        const result = { ...(await scanRunningCalls(ctx)), requeuedCalls: await requeueEndedCalls(ctx) };
        ctx.logger.debug({ jobId: job.id, ...result }, 'running calls scanned');
        return result;
      }
      default:
        throw new UnrecoverableError(`unknown maintenance task ${JSON.stringify((job.data as { task?: unknown }).task)}`);
    }
  };
}
