import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import type { TransactionJob } from '../../../src/shared/domain/calls';
import type { TransactionDeps } from '../../../src/workers/transactions/deps';
import { processEndedCall } from '../../../src/workers/transactions/processing';
import { transactionProcessor } from '../../../src/workers/transactions/processor';
import { callJobs } from '../../support/call-jobs';
import { createTestContext, TestContext } from '../../support/harness';
import { account, perSecondRating, seed } from '../../support/seed';

/**
 * A refusal the agent heard stays true when the same job runs again (found by the chaos run: begin
 * answered TOO_MANY_RUNNING_TRANSACTIONS, and the caller and its parent then held the call). The
 * worker publishes its answer before BullMQ marks the job completed, so a worker killed in between,
 * or Redis restored from a snapshot taken before the job finished, runs the job a second time. A
 * refusal changed nothing and, before this fix, recorded nothing: the second run decided again on
 * the state of the moment and could accept what the client was told was refused. Each case runs the
 * job through the worker's processor twice, with the state changed in between, as a re-run after a
 * crash (delivered a second time) and as a run from a restored snapshot (a first delivery again).
 */
describe("a refusal the agent heard is the job's answer for good", () => {
  let ctx: TestContext;
  let deps: TransactionDeps;
  let rating: RatingDataCache;
  let processor: ReturnType<typeof transactionProcessor>;
  const accounts = () => ctx.mongo.collections.accounts;
  const transactions = () => ctx.mongo.collections.transactions;
  const running = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.running_transactions;
  const balance = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.balance;
  const jobs = callJobs(Math.floor(Date.now() / 1000) * 1000 - 60_000);
  const ok = { ok: true, reason: null };
  /** `delivery`: 2 for a job delivered again after its worker died (src/shared/infra/call-queue.ts). */
  const runJob = async (id: string, data: TransactionJob, delivery: number) =>
    (await processor({ id, name: data.op, data }, delivery)).result;
  const reruns: Array<[string, number]> = [
    ['a re-run after the worker was killed before the job completed', 2],
    ['a run from a Redis snapshot taken before the job finished', 1],
  ];

  beforeAll(async () => {
    ctx = await createTestContext();
    const limited = (tag: string) => account(tag, { balance: 1000n, max_concurrent_transactions: 1, linked_accounts: [`${tag}-parent`] });
    const parent = (tag: string) => account(`${tag}-parent`, { balance: 1000n });
    await seed(ctx, {
      ...perSecondRating(),
      accounts: [
        limited('full1'),
        parent('full1'),
        limited('full2'),
        parent('full2'),
        account('off1', { balance: 1000n, active: false }),
        account('off2', { balance: 1000n, active: false }),
        account('gone1', { balance: 1000n }),
        account('gone2', { balance: 1000n }),
        account('late1', { balance: 1000n }),
        account('late2', { balance: 1000n }),
        account('twice', { balance: 1000n }),
      ],
    });
    rating = await RatingDataCache.start(ctx);
    deps = { ctx, rating };
    processor = transactionProcessor(deps);
  });

  afterAll(async () => {
    await rating?.close();
    await ctx?.destroy();
  });

  describe.each(reruns)('%s', (_name, delivery) => {
    const n = delivery;

    it('begin refused TOO_MANY_RUNNING_TRANSACTIONS leaves no entry after the slot frees and the job runs again', async () => {
      const caller = `full${n}`;
      expect(await runJob(`occupy-${n}`, jobs.begin('busy', caller), 1)).toEqual(ok);
      const job = jobs.begin('refused', caller);
      const refusal = { ok: false, reason: 'TOO_MANY_RUNNING_TRANSACTIONS' };
      expect(await runJob(`refused-begin-${n}`, job, 1)).toEqual(refusal);
      // The slot frees: the other call ends.
      expect(await runJob(`end-busy-${n}`, jobs.end('busy', caller, 5), 1)).toEqual(ok);
      for (const tag of [caller, `${caller}-parent`]) {
        for (const entry of (await running(tag)).filter((e) => !e.in_progress)) {
          await processEndedCall(deps, {
            account_tag: tag,
            transaction_tag: 'busy',
            entry_id: entry.id,
            enqueued_at: new Date().toISOString(),
          });
        }
      }
      expect(await running(caller)).toEqual([]);
      expect(await runJob(`refused-begin-${n}`, job, delivery)).toEqual(refusal);
      expect(await running(caller)).toEqual([]);
      expect(await running(`${caller}-parent`)).toEqual([]);
    });

    it('record refused NOT_ACTIVE charges nothing after the account is activated and the job runs again', async () => {
      const caller = `off${n}`;
      const job = jobs.record('r1', caller, 10);
      const refusal = { ok: false, reason: 'NOT_ACTIVE' };
      expect(await runJob(`refused-record-${n}`, job, 1)).toEqual(refusal);
      await accounts().updateOne({ account_tag: caller }, { $set: { active: true } });
      expect(await runJob(`refused-record-${n}`, job, delivery)).toEqual(refusal);
      expect(await transactions().countDocuments({ account_tag: caller })).toBe(0);
      expect(await balance(caller)).toBe(1000n);
    });

    it('rollback answered NOT_FOUND refunds nothing when the call is recorded before the job runs again', async () => {
      const caller = `gone${n}`;
      const job = jobs.rollback('r1', caller);
      const refusal = { ok: false, reason: 'NOT_FOUND' };
      expect(await runJob(`refused-rollback-${n}`, job, 1)).toEqual(refusal);
      expect(await runJob(`record-after-${n}`, jobs.record('r1', caller, 10), 1)).toEqual(ok);
      expect(await balance(caller)).toBe(989n);
      expect(await runJob(`refused-rollback-${n}`, job, delivery)).toEqual(refusal);
      expect(await balance(caller)).toBe(989n);
      expect(await transactions().countDocuments({ account_tag: caller, transaction_tag: 'r1' })).toBe(1);
    });

    it('end answered NOT_FOUND does not end the call begun before the job runs again', async () => {
      const caller = `late${n}`;
      const job = jobs.end('e1', caller, 10);
      const refusal = { ok: false, reason: 'NOT_FOUND' };
      expect(await runJob(`refused-end-${n}`, job, 1)).toEqual(refusal);
      expect(await runJob(`begin-after-${n}`, jobs.begin('e1', caller), 1)).toEqual(ok);
      expect(await runJob(`refused-end-${n}`, job, delivery)).toEqual(refusal);
      expect(await running(caller)).toEqual([expect.objectContaining({ transaction_tag: 'e1', in_progress: true })]);
    });
  });
  it('a copy of a job dropped at its deadline records the TIMEOUT it answers, so another copy of it cannot begin the call', async () => {
    // Two copies of one job (a push resent by the Redis client after a dropped connection): copy A,
    // taken just before the deadline's margin, is slow to write; copy B, taken within the margin, is
    // dropped and answers TIMEOUT, which the agent relays. A must not begin the call afterwards.
    const deadline = Date.now() + 450;
    const job = jobs.begin('twice-1', 'twice', deadline);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let paused!: () => void;
    const reached = new Promise<void>((resolve) => (paused = resolve));
    const real = ctx.mongo.collections.accounts;
    const slowWrites = new Proxy(real, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof value !== 'function') return value;
        if (prop !== 'updateOne') return (value as (...a: unknown[]) => unknown).bind(target);
        return async (...args: unknown[]) => {
          paused();
          await gate;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const slow = transactionProcessor({
      ...deps,
      ctx: { ...ctx, mongo: { ...ctx.mongo, collections: { ...ctx.mongo.collections, accounts: slowWrites } } },
    } as TransactionDeps);
    const copyA = slow({ id: 'copied-begin', name: 'begin', data: job }, 1);
    await reached;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - 200 - Date.now())));
    expect(await runJob('copied-begin', job, 1)).toEqual({ ok: false, reason: 'TIMEOUT' });
    open();
    expect((await copyA).result).toEqual({ ok: false, reason: 'TIMEOUT' });
    expect(await running('twice')).toEqual([]);
  });
});
