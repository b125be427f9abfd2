import { enqueueAlert, rearmAlert } from '../../../src/shared/domain/alerts';
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

  it('never throws into the caller, even with Redis gone', async () => {
    const broken = await createTestContext();
    await broken.destroy(); // its connections are closed from here on
    expect(await enqueueAlert(broken, alert('d'), { condition: 'x', occurrence: '1' })).toBe(false);
    await expect(rearmAlert(broken, 'CALL_REFUSED', 'd')).resolves.toBeUndefined();
  });
});
