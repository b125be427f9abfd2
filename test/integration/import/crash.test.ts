import { auditLedger } from '../../../src/shared/domain/ledger/audit';
import { createTestContext, TestContext } from '../../support/harness';
import { startWorkerProcess, WorkerProcess } from '../../support/processes';
import { waitFor } from '../../support/agent-harness';
import { account } from '../../support/seed';
import { balances, importFile, runCli, seedImportData, summaryOf, tempFile } from './support';

/**
 * Two worker processes share one import; the CLI and one worker are killed (SIGKILL) midway, the
 * import is run again, and every balance is exact: each call charged once, to the caller and to its
 * linked (parent) account, nothing to the receiver of an inbound call.
 */
describe('rating import: interrupted and resumed, two workers', () => {
  let ctx: TestContext;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    ctx = await createTestContext({ JOB_LOCK_MS: '2000', WORKER_CONCURRENCY: '2' });
    await seedImportData(ctx, 6);
    // a0 and a1 resell through p0 (rated on its own pricelist: same rate here).
    await ctx.mongo.collections.accounts.insertOne(account('p0', { balance: 1_000_000n }));
    await ctx.mongo.collections.accounts.updateMany({ account_tag: { $in: ['a0', 'a1'] } }, { $set: { linked_accounts: ['p0'] } });
    for (let i = 0; i < 2; i++) workers.push(await startWorkerProcess(ctx.config, { WORKER_CONCURRENCY: '2' }));
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await ctx?.destroy();
  });

  it('ends with exact balances', async () => {
    const header = 'transaction_tag,account_tag,source,destination,timestamp_begin,timestamp_end,destination_account_tag,tags';
    const calls = Array.from({ length: 400 }, (_, i) => ({
      tag: `c${i}`,
      account: `a${i % 5}`,
      seconds: (i % 50) + 1,
      // Every seventh call is to a5, a customer of ours too: an inbound record, fee 0.
      receiver: i % 7 === 0 ? 'a5' : '',
    }));
    const lines = calls.map((c) => {
      const end = new Date(Date.UTC(2026, 0, 1, 12, 0, 0) + c.seconds * 1000).toISOString();
      return `${c.tag},${c.account},4930111,4930222,2026-01-01T12:00:00Z,${end},${c.receiver},night|batch`;
    });
    const file = tempFile('big.csv', [header, ...lines].join('\n') + '\n');

    const first = runCli(ctx, [file, '--batch-size', '10', '--max-in-flight', '2', '--no-progress']);
    const batches = ctx.mongo.db.collection('import_batches');
    await waitFor(async () => (await batches.countDocuments({})) >= 6, 'some batches to finish', 60000);
    first.child.kill('SIGKILL');
    await workers[0].kill();
    await first.done;
    expect(await batches.countDocuments({})).toBeLessThan(40);

    const rerun = await importFile(ctx, [file, '--no-progress']);
    expect(rerun.code).toBe(0);
    const s = summaryOf(rerun.output);
    expect(s.accepted).toBe('400');
    expect(Number(s.rated) + Number(s.duplicates.split(' ')[0])).toBe(400);

    const expected = new Map<string, bigint>();
    const debit = (tag: string, fee: number) => expected.set(tag, (expected.get(tag) ?? 0n) + BigInt(fee));
    for (const c of calls) {
      debit(c.account, c.seconds);
      if (c.account === 'a0' || c.account === 'a1') debit('p0', c.seconds);
    }
    const after = await balances(ctx);
    for (const tag of ['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'p0'])
      expect([tag, after.get(tag)]).toEqual([tag, 1_000_000n - (expected.get(tag) ?? 0n)]);

    const records = ctx.mongo.collections.transactions;
    expect(await records.countDocuments({})).toBe(400 + 160 + calls.filter((c) => c.receiver).length);
    expect(await records.countDocuments({ state: { $ne: 'imported' } })).toBe(0);
    // Every batch stored its result and was settled (the killed run's finished batches included), which
    // is what makes its records charged; the audit agrees.
    expect(await batches.countDocuments({ members: { $exists: false }, job_timestamp: { $exists: false } })).toBe(0);
    expect(await batches.countDocuments({ settle_pending: true })).toBe(0);
    expect((await auditLedger(ctx.mongo.collections)).differences).toEqual([]);
    // Each of the 40 batches charged a0; its settlements debited it a few times, not once per batch.
    expect(await ctx.mongo.collections.ledger.countDocuments({ account_tag: 'a0', kind: 'import' })).toBeLessThan(10);
    const inbound = await records.findOne({ account_tag: 'a5', transaction_tag: 'c7' });
    expect(inbound).toMatchObject({ inbound: true, fee: 0n, tags: ['night', 'batch'], call_parties: ['a2', 'a5'] });
    const parent = await records.findOne({ account_tag: 'p0', transaction_tag: 'c5' });
    expect(parent).toMatchObject({ inbound: false, fee: 6n, call_parties: ['a0', 'p0'] });
  });
});
