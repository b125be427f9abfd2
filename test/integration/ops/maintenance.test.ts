import type { RunningTransaction } from '../../../src/shared/domain/types';
import { QueueNames } from '../../../src/shared/domain/queues/names';
import {
  AUDIT_SCHEDULER_ID,
  END_CALL_SCHEDULER_ID,
  scheduleMaintenance,
  SCAN_SCHEDULER_ID,
} from '../../../src/workers/maintenance/schedule';
import { startWorkers, WorkerPool } from '../../../src/workers/worker-pool';
import { createTestContext, TestContext } from '../../support/harness';
import { account, runningEntry } from '../../support/seed';
import { HttpReceiver, startHttpReceiver, waitFor } from './receivers';

/** A call in progress of account 'caller', begun `beganSecondsAgo` ago. */
function entry(tag: string, beganSecondsAgo: number, overrides: Partial<RunningTransaction> = {}): RunningTransaction {
  return runningEntry(tag, { timestamp_begin: new Date(Date.now() - beganSecondsAgo * 1000), ...overrides });
}

/**
 * The repeatable scan on the maintenance queue, through real BullMQ workers: a stale call and an
 * exhausted prepaid call each produce their event (seen at a webhook receiver), once per call.
 */
describe('stale and exhausted calls', () => {
  let webhook: HttpReceiver;
  let ctx: TestContext;
  let pool: WorkerPool;

  beforeAll(async () => {
    webhook = await startHttpReceiver();
    ctx = await createTestContext({
      ALERT_WEBHOOK_URL: webhook.url,
      ALERT_WEBHOOK_SECRET: 'maintenance-secret-0123456789',
      LONG_CALL_SECONDS: '3600',
      LONG_CALL_SCAN_SECONDS: '1',
    });
    await ctx.mongo.collections.accounts.insertMany([
      // Postpaid, one call running for two hours (stale), one recent.
      account('stale', {
        type: 'POSTPAID',
        balance: -500n,
        notification_email: 'ops@example.com',
        running_transactions: [entry('old-call', 7200), entry('new-call', 30)],
      }),
      // Prepaid, 100 units, a call at 60/minute running for 10 minutes: it owes 600, more than it has.
      account('broke', {
        balance: 100n,
        running_transactions: [entry('pricey-call', 600), entry('ended-call', 20, { in_progress: false, timestamp_end: new Date() })],
      }),
      // Prepaid with plenty left: nothing to say.
      account('rich', { balance: 1_000_000n, running_transactions: [entry('fine-call', 60)] }),
    ]);
    pool = await startWorkers(ctx, [QueueNames.alerts, QueueNames.maintenance]);
  });

  afterAll(async () => {
    await pool?.close();
    await ctx?.destroy();
    await webhook?.close();
  });

  const events = (kind: string) => webhook.requests.filter((r) => r.body.kind === kind);

  it('registers one scan schedule (and one audit schedule) however many workers start', async () => {
    await scheduleMaintenance(ctx);
    await scheduleMaintenance(ctx);
    const schedulers = await ctx.queues.maintenance.getJobSchedulers();
    expect(schedulers.map((s) => s.key).sort()).toEqual([AUDIT_SCHEDULER_ID, END_CALL_SCHEDULER_ID, SCAN_SCHEDULER_ID].sort());
    expect(schedulers.find((s) => s.key === SCAN_SCHEDULER_ID)!.every).toBe(1000);
    expect(schedulers.find((s) => s.key === AUDIT_SCHEDULER_ID)!.every).toBe(3_600_000);
  });

  it('raises LONG_RUNNING_CALL for the stale call and END_CALL for the exhausted prepaid call, once each', async () => {
    await waitFor(() => events('LONG_RUNNING_CALL').length > 0 && events('END_CALL').length > 0, 'both events');
    // Let the scan run a few more times: the events must not repeat.
    const completedScans = async () => (await ctx.queues.maintenance.getJobCounts('completed')).completed;
    const seen = await completedScans();
    await waitFor(async () => (await completedScans()) >= seen + 3, 'three more scans');
    const alertsDone = async () => {
      const c = await ctx.queues.alerts.getJobCounts('waiting', 'active', 'delayed');
      return c.waiting + c.active + c.delayed === 0;
    };
    await waitFor(alertsDone, 'the alert queue to drain');

    expect(events('LONG_RUNNING_CALL').map((r) => [r.body.account_tag, r.body.transaction_tag])).toEqual([['stale', 'old-call']]);
    expect(events('END_CALL').map((r) => [r.body.account_tag, r.body.transaction_tag])).toEqual([['broke', 'pricey-call']]);
    const end = events('END_CALL')[0].body;
    expect(Number((end.details as Record<string, string>).available_balance)).toBeLessThanOrEqual(0);
    expect(end.message).toContain('End call pricey-call of account broke');
  });
});

/**
 * "End this call" within seconds (issue 11): with the long scan a minute (here an hour) apart, the
 * exhausted-call check (END_CALL_SCAN_SECONDS) still catches a prepaid call as its balance runs out;
 * it also removes reservations past their time.
 */
describe('exhausted calls are caught within seconds, not at the next long scan', () => {
  let webhook: HttpReceiver;
  let ctx: TestContext;
  let pool: WorkerPool;

  beforeAll(async () => {
    webhook = await startHttpReceiver();
    ctx = await createTestContext({
      ALERT_WEBHOOK_URL: webhook.url,
      ALERT_WEBHOOK_SECRET: 'end-call-secret-0123456789',
      LONG_CALL_SCAN_SECONDS: '3600',
      END_CALL_SCAN_SECONDS: '1',
    });
    await ctx.mongo.collections.accounts.insertMany([
      // Prepaid 4 units at 60/minute, the call began now: its balance runs out 4 s from now.
      account('soon', { balance: 4n, running_transactions: [entry('short-call', 0)] }),
      account('held', {
        max_concurrent_transactions: 1,
        running_transactions: [entry('reserved', 0, { rate: null, reserved_until: new Date(Date.now() - 1000) })],
      }),
    ]);
    pool = await startWorkers(ctx, [QueueNames.alerts, QueueNames.maintenance]);
  });

  afterAll(async () => {
    await pool?.close();
    await ctx?.destroy();
    await webhook?.close();
  });

  it('raises END_CALL for a prepaid call whose balance runs out, long before the next long scan', async () => {
    const began = (await ctx.mongo.collections.accounts.findOne({
      account_tag: 'soon',
    }))!.running_transactions[0].timestamp_begin.getTime();
    await waitFor(() => webhook.requests.some((r) => r.body.kind === 'END_CALL'), 'END_CALL for short-call', 20_000);
    const event = webhook.requests.find((r) => r.body.kind === 'END_CALL')!.body;
    expect([event.account_tag, event.transaction_tag]).toEqual(['soon', 'short-call']);
    // Sent as the balance runs out (the 4th second would leave nothing; the check looks one 1 s period
    // ahead), never while the call still had more than a period of balance left.
    expect(Date.now() - began).toBeGreaterThan(2000);
  });

  it('removes a reservation past its time', async () => {
    await waitFor(
      async () => (await ctx.mongo.collections.accounts.findOne({ account_tag: 'held' }))!.running_transactions.length === 0,
      'the expired reservation removed',
      20_000,
    );
  });
});
