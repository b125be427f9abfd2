import { QueueNames } from '../../../src/shared/domain/queues/names';
import { AUDIT_SCHEDULER_ID, END_CALL_SCHEDULER_ID, SCAN_SCHEDULER_ID } from '../../../src/workers/maintenance/schedule';
import { startWorkers, WorkerPool } from '../../../src/workers/worker-pool';
import { waitFor } from '../../support/agent-harness';
import { createTestContext, TestContext } from '../../support/harness';

/**
 * The maintenance schedules live in Redis. The "end this call" check runs every END_CALL_SCAN_SECONDS:
 * a Redis that lost its data must get it back within about that period, not at the next long-call scan
 * (LONG_CALL_SCAN_SECONDS, a minute by default, an hour here).
 */
describe('maintenance schedules after Redis lost them', () => {
  let ctx: TestContext;
  let pool: WorkerPool;

  beforeAll(async () => {
    ctx = await createTestContext({ LONG_CALL_SCAN_SECONDS: '3600', END_CALL_SCAN_SECONDS: '1', AUDIT_INTERVAL_SECONDS: '3600' });
    pool = await startWorkers(ctx, [QueueNames.maintenance]);
  });

  afterAll(async () => {
    await pool?.close();
    await ctx?.destroy();
  });

  it('are registered again within a few end-call periods', async () => {
    const queue = ctx.queues.maintenance;
    expect(await queue.getJobScheduler(END_CALL_SCHEDULER_ID)).toBeTruthy();
    for (const id of [SCAN_SCHEDULER_ID, END_CALL_SCHEDULER_ID, AUDIT_SCHEDULER_ID]) await queue.removeJobScheduler(id);
    expect(await queue.getJobScheduler(END_CALL_SCHEDULER_ID)).toBeFalsy();
    const back = async () =>
      (await Promise.all([SCAN_SCHEDULER_ID, END_CALL_SCHEDULER_ID, AUDIT_SCHEDULER_ID].map((id) => queue.getJobScheduler(id)))).every(
        Boolean,
      );
    expect(await waitFor(back, 'the three schedules back', 10_000)).toBe(true);
  });
});
