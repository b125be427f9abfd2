import { enqueueAlert, rearmAlert, refusalAlert } from '../../../src/shared/domain/alerts';
import type { AlertJob } from '../../../src/shared/domain/queues/payloads';
import { createTestContext, TestContext } from '../../support/harness';
import { waitFor } from './receivers';

const alert = (account: string): AlertJob => ({
  kind: 'CALL_REFUSED',
  account_tag: account,
  transaction_tag: null,
  message: 'refused',
  email: null,
  mobile: null,
  details: {},
  at: new Date().toISOString(),
});

/** The remembered condition in Redis (no worker: only what gets queued is looked at). */
describe('alert deduplication', () => {
  let ctx: TestContext;
  let n = 0;
  const raise = (account: string, condition: string, fresh = false) =>
    enqueueAlert(ctx, alert(account), { condition, occurrence: String(++n), fresh });

  beforeAll(async () => {
    ctx = await createTestContext({ ALERT_REPEAT_SECONDS: '1' });
  });

  afterAll(async () => {
    await ctx?.destroy();
  });

  it('skips a repeat, alerts a changed condition, a fresh one and a re-armed one', async () => {
    expect(await raise('a', 'BALANCE_INSUFFICIENT')).toBe(true);
    expect(await raise('a', 'BALANCE_INSUFFICIENT')).toBe(false);
    expect(await raise('b', 'BALANCE_INSUFFICIENT')).toBe(true); // another account
    expect(await raise('a', 'TOO_MANY_RUNNING_TRANSACTIONS')).toBe(true);
    expect(await raise('a', 'BALANCE_INSUFFICIENT')).toBe(true); // changed back: not "in a row"
    expect(await raise('a', 'BALANCE_INSUFFICIENT', true)).toBe(true);
    await rearmAlert(ctx, 'CALL_REFUSED', 'a');
    expect(await raise('a', 'BALANCE_INSUFFICIENT')).toBe(true);
    expect(await ctx.queues.alerts.getJobCountByTypes('waiting')).toBe(6);
  });

  it('repeats an unchanged condition after ALERT_REPEAT_SECONDS, however often it is observed meanwhile', async () => {
    expect(await raise('c', 'BALANCE_INSUFFICIENT')).toBe(true);
    // Observed continuously (every 25 ms): the reminder still comes once the period is over.
    await waitFor(() => raise('c', 'BALANCE_INSUFFICIENT'), 'the reminder');
  });

  it('an alert raised once per call (END_CALL) whose queueing never finished is raised again at the next observation', async () => {
    const endCall: AlertJob = { ...alert('e'), kind: 'END_CALL', transaction_tag: 'call-1' };
    const options = { condition: 'exhausted', occurrence: 'once', rememberSeconds: 86_400, call: 'entry-1' };
    // The first queueing never completes (a worker killed, a reply lost): the caller gives up on it.
    const real = ctx.queues.alerts.add.bind(ctx.queues.alerts);
    ctx.queues.alerts.add = (() => new Promise(() => undefined)) as typeof ctx.queues.alerts.add;
    try {
      expect(await enqueueAlert(ctx, endCall, options)).toBe(false);
    } finally {
      ctx.queues.alerts.add = real;
    }
    // Not remembered as alerted: the next scan's observation queues it.
    expect(await enqueueAlert(ctx, endCall, options)).toBe(true);
    expect((await ctx.queues.alerts.getJobs(['waiting'])).filter((j) => j.name === 'END_CALL')).toHaveLength(1);
    // Then remembered: once per call.
    expect(await enqueueAlert(ctx, endCall, options)).toBe(false);
  }, 20_000);

  it('a refused call alerts once per account and reason within the period, whatever order the reasons come in', async () => {
    const account = { account_tag: 'f', notification_email: 'f@example.com', notification_mobile: null };
    for (const reason of [
      'BALANCE_INSUFFICIENT',
      'TOO_MANY_RUNNING_TRANSACTIONS',
      'BALANCE_INSUFFICIENT',
      'TOO_MANY_RUNNING_TRANSACTIONS',
    ] as const)
      await refusalAlert(ctx, account, { transaction_tag: null, destination: '39', reason });
    const refusals = (await ctx.queues.alerts.getJobs(['waiting'])).filter((j) => j.data.account_tag === 'f');
    expect(refusals.map((j) => j.data.details.reason).sort()).toEqual(['BALANCE_INSUFFICIENT', 'TOO_MANY_RUNNING_TRANSACTIONS']);
  });

  it('never throws into the caller, even with Redis gone', async () => {
    const broken = await createTestContext();
    await broken.destroy(); // its connections are closed from here on
    expect(await enqueueAlert(broken, alert('d'), { condition: 'x', occurrence: '1' })).toBe(false);
    await expect(rearmAlert(broken, 'CALL_REFUSED', 'd')).resolves.toBeUndefined();
  });
});
