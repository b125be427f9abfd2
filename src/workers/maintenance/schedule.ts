import type { AppContext } from '../../shared/context';
import type { MaintenanceJob } from '../../shared/queues/payloads';

export const SCAN_SCHEDULER_ID = 'scan-long-calls';

/**
 * Registers the periodic scan (every LONG_CALL_SCAN_SECONDS). A job scheduler is keyed by id, so
 * every worker process calling this at start leaves exactly one schedule, with the latest interval.
 */
export async function scheduleMaintenance(ctx: AppContext): Promise<void> {
  const data: MaintenanceJob = { task: 'scan-long-calls' };
  await ctx.queues.maintenance.upsertJobScheduler(
    SCAN_SCHEDULER_ID,
    { every: ctx.config.longCallScanSeconds * 1000 },
    { name: SCAN_SCHEDULER_ID, data },
  );
}
