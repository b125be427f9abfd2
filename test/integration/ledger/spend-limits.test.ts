import type { TransactionDeps } from '../../../src/workers/transactions/deps';
import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { auditLedger } from '../../../src/shared/domain/ledger/audit';
import { authorize } from '../../../src/workers/transactions/authorization';
import { begin } from '../../../src/workers/transactions/begin';
import { end } from '../../../src/workers/transactions/end';
import { processEndedCall } from '../../../src/workers/transactions/processing';
import { record } from '../../../src/workers/transactions/record';
import { reserveSlot } from '../../../src/workers/transactions/reservations';
import { callJobs } from '../../support/call-jobs';
import { createTestContext, TestContext } from '../../support/harness';
import { account, perSecondRating, seed } from '../../support/seed';

/**
 * Issue 34, part 3: spend limits. Per account, optional: the most one call may cost
 * (`max_call_cost`), and the most it may spend in a rolling hour and day (`hourly_spend_limit`,
 * `daily_spend_limit`); every party counts its own share. Rates: 1 a second (60 per minute, 1 s
 * steps, no connect fee); the authorization headroom is 2 s, so a grant of u units holds u + 2.
 */
describe('spend limits', () => {
  let ctx: TestContext;
  let deps: TransactionDeps;
  let rating: RatingDataCache;
  const accounts = () => ctx.mongo.collections.accounts;
  let jobCount = 0;
  const run = async <J extends { deadline: number }, R>(
    fn: (d: TransactionDeps, job: J, r: { id: string; deadline: number }) => Promise<R>,
    job: J,
  ) => fn(deps, job, { id: `job-${++jobCount}`, deadline: job.deadline });
  /** Calls that started a few minutes ago, inside every window. */
  const recent = () => callJobs(Date.now() - 300_000);
  const charged = async (tag: string) => {
    const entries = await ctx.mongo.collections.ledger.find({ account_tag: tag }).toArray();
    return -entries.reduce((sum, e) => sum + e.amount, 0n);
  };
  const processAll = async (tag: string) => {
    const doc = await accounts().findOne({ account_tag: tag });
    for (const entry of doc!.running_transactions.filter((e) => !e.in_progress)) {
      await processEndedCall(deps, {
        account_tag: tag,
        transaction_tag: entry.transaction_tag,
        entry_id: entry.id,
        enqueued_at: new Date().toISOString(),
      });
    }
  };

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, {
      ...perSecondRating('39', 0),
      accounts: [
        account('percall', { type: 'POSTPAID', balance: 0n, max_call_cost: 100n }),
        account('hourly', { type: 'POSTPAID', balance: 0n, hourly_spend_limit: 300n }),
        account('daily', { type: 'POSTPAID', balance: 0n, daily_spend_limit: 150n, hourly_spend_limit: 1000n }),
        account('beginner', { type: 'POSTPAID', balance: 0n, hourly_spend_limit: 50n }),
        account('child', { type: 'POSTPAID', balance: 0n, linked_accounts: ['limitedparent'] }),
        account('limitedparent', { type: 'POSTPAID', balance: 0n, hourly_spend_limit: 100n }),
        account('crowd', { type: 'POSTPAID', balance: 0n, hourly_spend_limit: 1000n, max_call_cost: 100n }),
        account('alerted', { type: 'POSTPAID', balance: 0n, hourly_spend_limit: 100n, notification_email: 'ops@example.net' }),
        account('onecall', { type: 'POSTPAID', balance: 0n, hourly_spend_limit: 1000n }),
        account('prepaidcap', { balance: 10_000n, max_call_cost: 60n }),
        account('renewer', { type: 'POSTPAID', balance: 0n, hourly_spend_limit: 1000n }),
        account('expirer', { type: 'POSTPAID', balance: 0n, hourly_spend_limit: 1000n }),
      ],
    });
    rating = await RatingDataCache.start(ctx);
    deps = { ctx, rating };
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  it('max_call_cost: a postpaid call is granted what the cap pays for, with the headroom', async () => {
    const answer = await run(authorize, recent().authorization(null, 'percall'));
    expect(answer).toMatchObject({ authorized: true, max_available_units: 98 });
  });

  it('max_call_cost below a prepaid balance: the cap decides', async () => {
    expect(await run(authorize, recent().authorization(null, 'prepaidcap'))).toMatchObject({ authorized: true, max_available_units: 58 });
  });

  it('an hourly limit: what was spent in the hour counts; nothing left refuses with SPEND_LIMIT_EXCEEDED', async () => {
    const jobs = recent();
    expect(await run(record, jobs.record('h1', 'hourly', 200))).toMatchObject({ ok: true });
    expect(await run(authorize, jobs.authorization(null, 'hourly'))).toMatchObject({ authorized: true, max_available_units: 98 });
    expect(await run(record, jobs.record('h2', 'hourly', 100))).toMatchObject({ ok: true });
    expect(await run(authorize, jobs.authorization(null, 'hourly'))).toMatchObject({
      authorized: false,
      unauthorized_reason: 'SPEND_LIMIT_EXCEEDED',
      unauthorized_account_tag: 'hourly',
    });
  });

  it('a daily limit counts the day; the tighter window decides', async () => {
    const jobs = recent();
    expect(await run(record, jobs.record('d1', 'daily', 100))).toMatchObject({ ok: true });
    expect(await run(authorize, jobs.authorization(null, 'daily'))).toMatchObject({ authorized: true, max_available_units: 48 });
  });

  // A refund gives back room only in the windows its charge was counted in: refunding yesterday's call
  // today must not let today spend the day's limit twice (docs/AGENT.md, "Spend limits").
  it('a refund or rerating credit counts in a window only when the charge it reverses was applied in it', async () => {
    const tag = 'creditwindows';
    await accounts().insertOne({ ...account(tag, { type: 'POSTPAID', balance: 0n, daily_spend_limit: 1000n }), _id: tag } as never);
    const now = Date.now();
    const entry = (id: string, amount: bigint, kind: 'charge' | 'refund' | 'rerate', ref: string, agoMs: number) => ({
      _id: id,
      account_tag: tag,
      amount,
      kind,
      transaction_tag: ref,
      ref,
      at: new Date(now - agoMs),
    });
    try {
      // Yesterday's call (charged 25 h ago) refunded a minute ago: today's room stays the limit.
      await ctx.mongo.collections.ledger.insertMany([
        entry(`charge:old-${tag}`, -1000n, 'charge', `old-${tag}`, 25 * 3_600_000),
        entry(`refund:old-${tag}`, 1000n, 'refund', `old-${tag}`, 60_000),
      ]);
      expect(await run(authorize, recent().authorization(null, tag))).toMatchObject({ authorized: true, max_available_units: 998 });
      // Today's call of 600, lowered by a rerating by 200: 400 spent today, so 600 of room.
      await ctx.mongo.collections.ledger.insertMany([
        entry(`charge:new-${tag}`, -600n, 'charge', `new-${tag}`, 120_000),
        entry(`rerate:run-${tag}:new-${tag}`, 200n, 'rerate', `new-${tag}`, 60_000),
      ]);
      expect(await run(authorize, recent().authorization(null, tag))).toMatchObject({ authorized: true, max_available_units: 598 });
    } finally {
      await ctx.mongo.collections.ledger.deleteMany({ account_tag: tag });
      await accounts().deleteOne({ account_tag: tag });
    }
  });

  // Holds are written only on the account as it was read, so parallel authorizations see each other's;
  // a retried authorization renewing its own reservation's hold is no exception.
  it('a retried authorization renews its hold only on the account as it read it', async () => {
    expect(await run(authorize, recent().authorization('rt1', 'renewer'))).toMatchObject({ authorized: true });
    const stale = (await accounts().findOne({ account_tag: 'renewer' }))!;
    const mine = stale.running_transactions.find((e) => e.transaction_tag === 'rt1')!;
    expect(mine.hold).toBe(1000n);
    // Another authorization or charge changes the account after the retry read it.
    await accounts().updateOne({ account_tag: 'renewer' }, { $inc: { rev: 1 } });
    const retried = { ...mine, hold: 400n, reserved_until: new Date(Date.now() + 60_000) };
    expect(await reserveSlot(deps, stale, retried, new Date())).toEqual({ ok: false, reason: 'changed' });
    const after = (await accounts().findOne({ account_tag: 'renewer' }))!;
    expect(after.running_transactions.find((e) => e.id === mine.id)!.hold).toBe(1000n);
    await accounts().updateOne({ account_tag: 'renewer' }, { $set: { running_transactions: [] } });
  });

  // An expired reservation holds nothing (the room it held went to others): its begin decides afresh.
  it('a begin after its reservation expired is not granted the hold it had: the limits decide again', async () => {
    const jobs = recent();
    expect(await run(authorize, jobs.authorization('ex1', 'expirer'))).toMatchObject({ authorized: true });
    await accounts().updateOne(
      { account_tag: 'expirer' },
      { $set: { 'running_transactions.$[r].reserved_until': new Date(Date.now() - 1000) } },
      { arrayFilters: [{ 'r.transaction_tag': 'ex1' }] },
    );
    // The expired hold no longer counts: the next call is granted the whole hour.
    expect(await run(authorize, jobs.authorization('ex2', 'expirer'))).toMatchObject({ authorized: true, max_available_units: 998 });
    expect(await run(begin, jobs.begin('ex1', 'expirer'))).toMatchObject({ ok: false, reason: 'SPEND_LIMIT_EXCEEDED' });
    expect(await run(begin, jobs.begin('ex2', 'expirer'))).toMatchObject({ ok: true });
    const held = (await accounts().findOne({ account_tag: 'expirer' }))!.running_transactions.filter(
      (e) => !(e.reserved_until && e.reserved_until.getTime() < Date.now()),
    );
    expect(held.map((e) => e.transaction_tag)).toEqual(['ex2']);
    await accounts().updateOne({ account_tag: 'expirer' }, { $set: { running_transactions: [] } });
  });

  it('a parent counts its own share: its limit bounds the child call', async () => {
    expect(await run(authorize, recent().authorization(null, 'child'))).toMatchObject({ authorized: true, max_available_units: 98 });
  });

  it('begin refuses a call the limits no longer allow', async () => {
    const jobs = recent();
    expect(await run(record, jobs.record('b1', 'beginner', 50))).toMatchObject({ ok: true });
    expect(await run(begin, jobs.begin('b2', 'beginner'))).toMatchObject({ ok: false, reason: 'SPEND_LIMIT_EXCEEDED' });
    expect((await accounts().findOne({ account_tag: 'beginner' }))!.running_transactions).toHaveLength(0);
  });

  it('without max_call_cost, one call may hold the whole window: a second call is refused while it runs', async () => {
    const jobs = callJobs(Date.now());
    expect(await run(authorize, jobs.authorization('o1', 'onecall'))).toMatchObject({ authorized: true, max_available_units: 998 });
    expect(await run(authorize, jobs.authorization('o2', 'onecall'))).toMatchObject({
      authorized: false,
      unauthorized_reason: 'SPEND_LIMIT_EXCEEDED',
    });
  });

  it('50 parallel calls of one account never together pass its hourly limit; max_call_cost lets them share it', async () => {
    const jobs = callJobs(Date.now());
    const tags = Array.from({ length: 50 }, (_, i) => `p${i}`);
    const answers = await Promise.all(tags.map((tag) => run(authorize, jobs.authorization(tag, 'crowd'))));
    const granted = tags.filter((_, i) => answers[i].authorized);
    // Each call holds at most max_call_cost (100) of the hour's 1000: ten calls, the rest refused.
    expect(granted.length).toBe(10);
    expect(
      answers
        .filter((a) => !a.authorized)
        .every((a) => a.unauthorized_reason === 'SPEND_LIMIT_EXCEEDED' || a.unauthorized_reason === 'BUSY'),
    ).toBe(true);
    // Every granted call begins and runs its whole grant plus the headroom a proxy may overrun.
    await Promise.all(granted.map((tag) => run(begin, jobs.begin(tag, 'crowd'))));
    const unitsOf = new Map(tags.map((tag, i) => [tag, answers[i].max_available_units ?? 0]));
    for (const tag of granted) await run(end, jobs.end(tag, 'crowd', unitsOf.get(tag)! + 2));
    await processAll('crowd');
    const total = await charged('crowd');
    expect(total).toBe(1000n);
  });

  it('an alert goes out when a charge makes the hour reach 80 % and then 100 % of its limit, once each', async () => {
    const spendAlerts = async () =>
      (await ctx.queues.alerts.getJobs(['completed', 'waiting', 'active', 'delayed', 'failed']))
        .filter((j) => j.data.kind === 'SPEND_LIMIT' && j.data.account_tag === 'alerted')
        .map((j) => j.data.details.percent)
        .sort();
    const until = async (want: string[]) => {
      for (let i = 0; i < 100 && JSON.stringify(await spendAlerts()) !== JSON.stringify(want); i++)
        await new Promise((r) => setTimeout(r, 20));
      expect(await spendAlerts()).toEqual(want);
    };
    const jobs = recent();
    expect(await run(record, jobs.record('a1', 'alerted', 50))).toMatchObject({ ok: true });
    expect(await run(record, jobs.record('a2', 'alerted', 30))).toMatchObject({ ok: true });
    await until(['80']);
    expect(await run(record, jobs.record('a3', 'alerted', 10))).toMatchObject({ ok: true });
    expect(await run(record, jobs.record('a4', 'alerted', 10))).toMatchObject({ ok: true });
    await until(['100', '80']);
  });

  it('the ledger audit stays exact', async () => {
    expect((await auditLedger(ctx.mongo.collections)).differences).toEqual([]);
  });
});
