import type { AppContext } from '../../shared/domain/context';
import type { MaintenanceJob } from '../../shared/domain/queues/payloads';

export const SCAN_SCHEDULER_ID = 'scan-long-calls';
export const AUDIT_SCHEDULER_ID = 'audit-ledger';
export const END_CALL_SCHEDULER_ID = 'scan-exhausted-calls';

/**
 * Registers the periodic scan (every LONG_CALL_SCAN_SECONDS), the "end this call" check with the
 * reservation sweep (every END_CALL_SCAN_SECONDS) and the ledger audit (every
 * AUDIT_INTERVAL_SECONDS). A job scheduler is keyed by id, so every worker process calling this leaves
 * exactly one schedule of each, with the latest interval.
 */
export async function scheduleMaintenance(ctx: AppContext): Promise<void> {
  const data: MaintenanceJob = { task: 'scan-long-calls' };
  await ctx.queues.maintenance.upsertJobScheduler(
    SCAN_SCHEDULER_ID,
    { every: ctx.config.longCallScanSeconds * 1000 },
    { name: SCAN_SCHEDULER_ID, data },
  );
  const endCalls: MaintenanceJob = { task: 'scan-exhausted-calls' };
  await ctx.queues.maintenance.upsertJobScheduler(
    END_CALL_SCHEDULER_ID,
    { every: ctx.config.endCallScanSeconds * 1000 },
    { name: END_CALL_SCHEDULER_ID, data: endCalls },
  );
  // The ledger audit reads every account, ledger entry and record: seldom (AUDIT_INTERVAL_SECONDS).
  if (ctx.config.auditIntervalSeconds > 0) {
    const audit: MaintenanceJob = { task: 'audit-ledger' };
    await ctx.queues.maintenance.upsertJobScheduler(
      AUDIT_SCHEDULER_ID,
      { every: ctx.config.auditIntervalSeconds * 1000 },
      { name: AUDIT_SCHEDULER_ID, data: audit },
    );
  } else {
    await ctx.queues.maintenance.removeJobScheduler(AUDIT_SCHEDULER_ID);
  }
}
