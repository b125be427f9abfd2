import { createHmac } from 'node:crypto';
import { checkBalanceAlerts, endCallAlert, enqueueAlert, refusalAlert } from '../../../src/shared/domain/alerts';
import { QueueNames } from '../../../src/shared/domain/queues/names';
import { startWorkers, WorkerPool } from '../../../src/workers/worker-pool';
import { createTestContext, TestContext } from '../../support/harness';
import { HttpReceiver, SmtpReceiver, startHttpReceiver, startSmtpReceiver, waitFor } from './receivers';

const SECRET = 'webhook-secret-for-tests';

const alice = {
  account_tag: 'alice',
  notification_email: 'alice@example.com',
  notification_mobile: '+15550001111',
  balance: 40n,
  balance_alert_threshold: 50n,
};

/** Alerts through a real BullMQ worker to a real SMTP server and real HTTP receivers. */
describe('alert delivery', () => {
  let smtp: SmtpReceiver;
  let sms: HttpReceiver;
  let webhook: HttpReceiver;
  let ctx: TestContext;
  let pool: WorkerPool;

  beforeAll(async () => {
    [smtp, sms, webhook] = await Promise.all([startSmtpReceiver(), startHttpReceiver(), startHttpReceiver()]);
    ctx = await createTestContext({
      SMTP_URL: smtp.url,
      ALERT_EMAIL_FROM: 'Rating <alerts@rating.test>',
      SMS_GATEWAY_URL: sms.url,
      ALERT_WEBHOOK_URL: webhook.url,
      ALERT_WEBHOOK_SECRET: SECRET,
    });
    pool = await startWorkers(ctx, [QueueNames.alerts]);
  });

  afterAll(async () => {
    await pool?.close();
    await ctx?.destroy();
    await Promise.all([smtp?.close(), sms?.close(), webhook?.close()]);
  });

  const webhooksOf = (kind: string, account: string) =>
    webhook.requests.filter((r) => r.body.kind === kind && r.body.account_tag === account);

  it('delivers a low-balance alert by e-mail, SMS and a signed webhook', async () => {
    await checkBalanceAlerts(ctx, alice, 60n);

    const email = await waitFor(() => smtp.messages.find((m) => m.envelopeTo.includes('alice@example.com')), 'the e-mail');
    expect(email.mail.subject).toBe('[call rating] LOW_BALANCE - account alice');
    expect(email.mail.from?.text).toContain('alerts@rating.test');
    expect(email.mail.text).toContain('Balance of account alice is 40, below the alert threshold of 50.');
    expect(email.mail.text).toContain('previous_balance: 60');

    const text = await waitFor(() => sms.requests.find((r) => r.body.to === '+15550001111'), 'the SMS');
    expect(text.body).toEqual({ to: '+15550001111', message: 'Balance of account alice is 40, below the alert threshold of 50.' });
    expect(text.headers['content-type']).toBe('application/json');

    const hook = await waitFor(() => webhooksOf('LOW_BALANCE', 'alice')[0], 'the webhook');
    const expected = `sha256=${createHmac('sha256', SECRET).update(hook.raw).digest('hex')}`;
    expect(hook.headers['x-rating-signature']).toBe(expected);
    expect(hook.headers['x-rating-event']).toBe('LOW_BALANCE');
    expect(hook.body).toMatchObject({
      kind: 'LOW_BALANCE',
      account_tag: 'alice',
      transaction_tag: null,
      details: { balance: '40', previous_balance: '60', threshold: '50' },
    });
    expect(hook.body.id).toBe(hook.headers['x-rating-delivery']);
  });

  it('does not alert the same condition twice in a row, and alerts again after a recovery', async () => {
    const bob = { ...alice, account_tag: 'bob', notification_email: 'bob@example.com', balance: -5n };
    await checkBalanceAlerts(ctx, bob, 10n); // crosses zero: NEGATIVE_BALANCE
    await checkBalanceAlerts(ctx, { ...bob, balance: -8n }, -5n); // still below: same condition
    // A direct repeat of the remembered condition is refused by enqueueAlert itself.
    const repeat = await enqueueAlert(
      ctx,
      {
        kind: 'NEGATIVE_BALANCE',
        account_tag: 'bob',
        transaction_tag: null,
        message: 'x',
        email: null,
        mobile: null,
        details: {},
        at: new Date().toISOString(),
      },
      { condition: 'below', occurrence: 'repeat' },
    );
    expect(repeat).toBe(false);
    // Topped up (no worker saw it) and crossing again: a fresh condition, alerted.
    await checkBalanceAlerts(ctx, { ...bob, balance: -1n }, 30n);

    await waitFor(() => webhooksOf('NEGATIVE_BALANCE', 'bob').length >= 2, 'two negative-balance webhooks');
    const jobs = await ctx.queues.alerts.getJobs(['completed', 'waiting', 'active', 'delayed', 'failed']);
    expect(jobs.filter((j) => j.data.account_tag === 'bob')).toHaveLength(2);
    const bobs = webhooksOf('NEGATIVE_BALANCE', 'bob').map((r) => (r.body.details as Record<string, string>).balance);
    expect(bobs.sort()).toEqual(['-1', '-5']);
  });

  it('alerts only below zero when no threshold is set (LOW_BALANCE_THRESHOLD defaults to 0)', async () => {
    const frank = { account_tag: 'frank', notification_email: null, notification_mobile: null, balance: 5n };
    await checkBalanceAlerts(ctx, frank, 10n);
    await checkBalanceAlerts(ctx, { ...frank, balance: -1n }, 5n);
    const jobs = (await ctx.queues.alerts.getJobs(['completed', 'waiting', 'active', 'delayed', 'failed'])).filter(
      (j) => j.data.account_tag === 'frank',
    );
    expect(jobs.map((j) => j.data.kind)).toEqual(['NEGATIVE_BALANCE']);
  });

  it('sends a refusal alert once per reason', async () => {
    const carol = { account_tag: 'carol', notification_email: 'carol@example.com', notification_mobile: null };
    await refusalAlert(ctx, carol, { transaction_tag: 'c1', destination: '3932', reason: 'BALANCE_INSUFFICIENT' });
    await refusalAlert(ctx, carol, { transaction_tag: 'c2', destination: '3932', reason: 'BALANCE_INSUFFICIENT' });
    await refusalAlert(ctx, carol, { transaction_tag: 'c3', destination: '3932', reason: 'NOT_FOUND' }); // not alerted
    await refusalAlert(ctx, carol, { transaction_tag: 'c4', destination: '3932', reason: 'TOO_MANY_RUNNING_TRANSACTIONS' });

    await waitFor(() => smtp.messages.filter((m) => m.envelopeTo.includes('carol@example.com')).length >= 2, 'two refusal e-mails');
    const hooks = await waitFor(() => webhooksOf('CALL_REFUSED', 'carol').length >= 2 && webhooksOf('CALL_REFUSED', 'carol'), 'webhooks');
    expect(hooks.map((h) => (h.body.details as Record<string, string>).reason).sort()).toEqual([
      'BALANCE_INSUFFICIENT',
      'TOO_MANY_RUNNING_TRANSACTIONS',
    ]);
    // No SMS: carol has no mobile number.
    expect(sms.requests.filter((r) => String(r.body.message).includes('carol'))).toEqual([]);
  });

  it('sends "end this call" to the webhook only, with account_tag and transaction_tag', async () => {
    await endCallAlert(ctx, {
      account_tag: 'dave',
      transaction_tag: 'call-7',
      entry_id: 'e-7',
      caller_account_tag: 'dave',
      available_balance: -3n,
    });
    const hook = await waitFor(() => webhooksOf('END_CALL', 'dave')[0], 'the end-call webhook');
    expect(hook.body).toMatchObject({
      kind: 'END_CALL',
      account_tag: 'dave',
      transaction_tag: 'call-7',
      details: { available_balance: '-3', caller_account_tag: 'dave' },
    });
    const job = await ctx.queues.alerts.getJob(String(hook.body.id));
    expect(await job?.getState()).toBe('completed');
    expect(job?.returnvalue).toEqual({ delivered: ['webhook'], skipped: ['email', 'sms'] });
  });

  // "End this call" is the guard of prepaid calls that share a balance: once per call, so it must not
  // be given up after the ten tries (about 17 minutes) of other alerts while the switch's receiver is down.
  it('keeps retrying "end this call" every 10 s for a day, where other alerts give up after ten tries', async () => {
    await endCallAlert(ctx, {
      account_tag: 'frank',
      transaction_tag: 'call-9',
      entry_id: 'e-9',
      caller_account_tag: 'frank',
      available_balance: -1n,
    });
    const hook = await waitFor(() => webhooksOf('END_CALL', 'frank')[0], 'the end-call webhook');
    const job = await ctx.queues.alerts.getJob(String(hook.body.id));
    expect(job!.opts).toMatchObject({ attempts: 8640, backoff: { type: 'fixed', delay: 10_000 } });
    await refusalAlert(
      ctx,
      { account_tag: 'frank', notification_email: null, notification_mobile: null },
      {
        transaction_tag: 'call-10',
        destination: '44',
        reason: 'BALANCE_INSUFFICIENT',
      },
    );
    const refused = await waitFor(() => webhooksOf('CALL_REFUSED', 'frank')[0], 'the refusal webhook');
    expect((await ctx.queues.alerts.getJob(String(refused.body.id)))!.opts).toMatchObject({ attempts: 10 });
  });

  it('retries a failing receiver and does not resend channels that succeeded', async () => {
    const before = webhook.requests.length;
    webhook.respond = (index) => (index === before ? 500 : 200);
    try {
      await checkBalanceAlerts(ctx, { ...alice, account_tag: 'erin', notification_email: 'erin@example.com', balance: 10n }, 100n);
      const attempts = await waitFor(
        () => webhooksOf('LOW_BALANCE', 'erin').length >= 2 && webhooksOf('LOW_BALANCE', 'erin'),
        'the retried webhook',
      );
      expect(attempts[0].body.id).toBe(attempts[1].body.id); // the same delivery, retried
      const job = await ctx.queues.alerts.getJob(String(attempts[0].body.id));
      await waitFor(async () => (await job!.getState()) === 'completed', 'the job to complete');
      const done = await ctx.queues.alerts.getJob(String(attempts[0].body.id));
      expect(done!.attemptsMade).toBe(2);
      expect(done!.data.delivered?.sort()).toEqual(['email', 'sms', 'webhook']);
      // E-mail and SMS succeeded on the first attempt and were not sent again.
      expect(smtp.messages.filter((m) => m.envelopeTo.includes('erin@example.com'))).toHaveLength(1);
      expect(sms.requests.filter((r) => String(r.body.message).includes('erin'))).toHaveLength(1);
    } finally {
      webhook.respond = () => 200;
    }
  });
});
