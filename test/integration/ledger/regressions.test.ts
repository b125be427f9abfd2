import { auditLedger } from '../../../src/shared/domain/ledger/audit';
import { processEndedCall } from '../../../src/workers/transactions/processing';
import type { TransactionDeps } from '../../../src/workers/transactions/deps';
import { AgentHarness, QUEUED_PROCESSING, startAgentHarness, waitFor } from '../../support/agent-harness';
import { account, perSecondRating, seed } from '../../support/seed';
import { importFile, tempFile, csvOf } from '../import/support';

/**
 * The money defects of issue 9, each reproduced through the agent with real worker processes and
 * asserted on balances. Rates: 60 per minute, 1 s increments, connect fee 1, so a call of n seconds
 * costs n + 1.
 */
describe('ledger: each charge and refund exactly once', () => {
  let h: AgentHarness;
  const accounts = () => h.ctx.mongo.collections.accounts;
  const transactions = () => h.ctx.mongo.collections.transactions;
  const balance = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.balance;
  const running = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.running_transactions;
  // Calls begin a minute ago: prepaid checks count a call in progress as costing up to now.
  const t0 = Math.floor(Date.now() / 1000) * 1000 - 60_000;
  const at = (seconds: number) => new Date(t0 + seconds * 1000).toISOString();

  const record = (tag: string, accountTag: string, seconds: number) =>
    h.rest('/v1/record_transaction', {
      transaction_tag: tag,
      account_tag: accountTag,
      source: '1',
      destination: '391234',
      timestamp_begin: at(0),
      timestamp_end: at(seconds),
    });
  const begin = (tag: string, accountTag: string) =>
    h.rest('/v1/begin_transaction', {
      transaction_tag: tag,
      account_tag: accountTag,
      source: '1',
      destination: '391234',
      timestamp_begin: at(0),
    });
  const end = (tag: string, accountTag: string, seconds: number) =>
    h.rest('/v1/end_transaction', { transaction_tag: tag, account_tag: accountTag, timestamp_end: at(seconds) });
  const rollback = (tag: string, accountTag: string) =>
    h.rest('/v1/rollback_transaction', { transaction_tag: tag, account_tag: accountTag });
  const ok = { status: 200, body: { ok: true, reason: null } };
  const processed = (...tags: string[]) =>
    waitFor(
      async () => {
        for (const tag of tags) if ((await running(tag)).length > 0) return false;
        return true;
      },
      `processing of ${tags.join(', ')}`,
    );

  beforeAll(async () => {
    h = await startAgentHarness(2, QUEUED_PROCESSING);
    await seed(h.ctx, {
      ...perSecondRating(),
      accounts: [
        account('reuse', { balance: 1000n }),
        account('reuse2', { balance: 1000n }),
        account('child', { balance: 1000n, linked_accounts: ['parent'] }),
        account('parent', { balance: 1000n }),
        account('kid1', { balance: 1000n, linked_accounts: ['reseller'] }),
        account('kid2', { balance: 1000n, linked_accounts: ['reseller'] }),
        account('reseller', { balance: 1000n }),
        account('busy', { balance: 1_000_000n }),
        account('busy2', { balance: 1_000_000n }),
      ],
    });
  });

  afterAll(() => h?.close());

  it('defect 1: a tag reused after a rollback is charged and refunded each time (record path)', async () => {
    expect(await record('t1', 'reuse', 10)).toMatchObject(ok);
    expect(await balance('reuse')).toBe(989n);
    expect(await rollback('t1', 'reuse')).toMatchObject(ok);
    expect(await balance('reuse')).toBe(1000n);
    expect(await record('t1', 'reuse', 10)).toMatchObject(ok);
    expect(await balance('reuse')).toBe(989n);
    expect(await transactions().countDocuments({ account_tag: 'reuse', transaction_tag: 't1' })).toBe(1);
    expect(await rollback('t1', 'reuse')).toMatchObject(ok);
    expect(await balance('reuse')).toBe(1000n);
    expect(await transactions().countDocuments({ account_tag: 'reuse', transaction_tag: 't1' })).toBe(0);
  });

  it('defect 1: a tag reused after a rollback is charged again (begin/end path), and nothing leaks', async () => {
    for (let round = 0; round < 2; round++) {
      expect(await begin('t2', 'reuse2')).toMatchObject(ok);
      expect(await end('t2', 'reuse2', 10)).toMatchObject(ok);
      await processed('reuse2');
      expect(await balance('reuse2')).toBe(989n);
      expect(await rollback('t2', 'reuse2')).toMatchObject(ok);
      expect(await balance('reuse2')).toBe(1000n);
    }
    expect(await running('reuse2')).toEqual([]);
  });

  it('defect 2: rollback of the caller refunds a parent whose processing already ran', async () => {
    await h.ctx.queues.processing.pause();
    try {
      expect(await begin('t3', 'child')).toMatchObject(ok);
      expect(await end('t3', 'child', 20)).toMatchObject(ok);
      // Only the parent's processing runs (in this process, as a worker would).
      const entry = (await running('parent'))[0];
      const deps = { ctx: h.ctx, rating: null } as unknown as TransactionDeps;
      const job = {
        account_tag: 'parent',
        transaction_tag: 't3',
        entry_id: (entry as { id?: string }).id,
        enqueued_at: new Date().toISOString(),
      };
      expect((await processEndedCall(deps, job as never)).outcome).toBe('charged');
      expect(await balance('parent')).toBe(979n);
      expect(await rollback('t3', 'child')).toMatchObject(ok);
    } finally {
      await h.ctx.queues.processing.resume();
    }
    await processed('child', 'parent');
    await new Promise((r) => setTimeout(r, 300));
    expect(await balance('parent')).toBe(1000n);
    expect(await balance('child')).toBe(1000n);
    expect(await transactions().countDocuments({ transaction_tag: 't3' })).toBe(0);
  });

  it('defect 3: two callers under one parent with the same tag are two calls for the parent', async () => {
    expect(await begin('same', 'kid1')).toMatchObject(ok);
    expect(await begin('same', 'kid2')).toMatchObject(ok);
    expect(await end('same', 'kid1', 10)).toMatchObject(ok);
    expect(await end('same', 'kid2', 20)).toMatchObject(ok);
    await processed('kid1', 'kid2', 'reseller');
    expect(await balance('kid1')).toBe(989n);
    expect(await balance('kid2')).toBe(979n);
    expect(await balance('reseller')).toBe(1000n - 11n - 21n);
    expect(await transactions().countDocuments({ account_tag: 'reseller', transaction_tag: 'same' })).toBe(2);
    // Rolling back kid2's call refunds the reseller's share of that call only.
    expect(await rollback('same', 'kid2')).toMatchObject(ok);
    expect(await balance('kid2')).toBe(1000n);
    expect(await balance('reseller')).toBe(1000n - 11n);
    expect(await transactions().countDocuments({ account_tag: 'reseller', transaction_tag: 'same' })).toBe(1);
  });

  it('defect 6: processing retried after hundreds of other charges on the account finds its charge, keeps its record', async () => {
    expect(await begin('w1', 'busy')).toMatchObject(ok);
    expect(await end('w1', 'busy', 10)).toMatchObject(ok);
    await processed('busy');
    const charged = await waitFor(
      () => transactions().findOne({ account_tag: 'busy', transaction_tag: 'w1', state: 'charged' }),
      'record charged',
    );
    expect(charged).toMatchObject({ state: 'charged', fee: 11n });
    // The crash point: debited, but the record not yet marked charged.
    await transactions().updateOne({ _id: charged!._id }, { $set: { state: 'pending' } });
    for (let i = 0; i < 510; i += 30) {
      const results = await Promise.all(Array.from({ length: Math.min(30, 510 - i) }, (_, j) => record(`f${i + j}`, 'busy', 1)));
      for (const r of results) expect(r).toMatchObject(ok);
    }
    expect(await balance('busy')).toBe(1_000_000n - 11n - 510n * 2n);
    const deps = { ctx: h.ctx, rating: null } as unknown as TransactionDeps;
    const job = { account_tag: 'busy', transaction_tag: 'w1', entry_id: charged!._id, enqueued_at: new Date().toISOString() };
    await processEndedCall(deps, job as never);
    expect(await transactions().findOne({ _id: charged!._id })).toMatchObject({ state: 'charged', fee: 11n });
    expect(await balance('busy')).toBe(1_000_000n - 11n - 510n * 2n);
  }, 120000);

  it('defect 6: a rollback retried after hundreds of other operations refunds once', async () => {
    expect(await record('r1', 'busy2', 10)).toMatchObject(ok);
    const charged = await transactions().findOne({ account_tag: 'busy2', transaction_tag: 'r1' });
    expect(await rollback('r1', 'busy2')).toMatchObject(ok);
    expect(await balance('busy2')).toBe(1_000_000n);
    // The crash point of a rollback: refunded, but the record not yet deleted.
    await transactions().insertOne({ ...charged!, state: 'rolling_back' });
    for (let i = 0; i < 510; i += 30) {
      await Promise.all(Array.from({ length: Math.min(30, 510 - i) }, (_, j) => record(`g${i + j}`, 'busy2', 1)));
    }
    expect(await rollback('r1', 'busy2')).toMatchObject(ok);
    expect(await balance('busy2')).toBe(1_000_000n - 510n * 2n);
    expect(await transactions().countDocuments({ account_tag: 'busy2', transaction_tag: 'r1' })).toBe(0);
  }, 120000);

  it('leaves every balance equal to its opening balance plus its ledger, and every charged record in the ledger', async () => {
    await waitFor(async () => (await auditLedger(h.ctx.mongo.collections)).records_in_flight === 0, 'records settled');
    const report = await auditLedger(h.ctx.mongo.collections);
    expect(report).toMatchObject({ pending_markers: 0, records_in_flight: 0, differences: [] });
    expect(report.ledger_entries).toBeGreaterThan(1000);
  });
});

describe('ledger: imports', () => {
  let h: AgentHarness;

  beforeAll(async () => {
    h = await startAgentHarness(1);
    await seed(h.ctx, {
      ...perSecondRating('49', 0),
      accounts: [account('a0', { balance: 1000n })],
    });
  });

  afterAll(() => h?.close());

  it('defect 5: an import re-run after its batch documents (and its jobs) were removed charges nothing again', async () => {
    const file = tempFile(
      'calls.csv',
      csvOf([
        { tag: 'i1', account: 'a0', seconds: 10 },
        { tag: 'i2', account: 'a0', seconds: 12 },
      ]),
    );
    const first = await importFile(h.ctx, [file, '--no-progress']);
    expect(first.code).toBe(0);
    const balance = async () => (await h.ctx.mongo.collections.accounts.findOne({ account_tag: 'a0' }))!.balance;
    expect(await balance()).toBe(978n);
    // A cleanup removes the batch documents; Redis forgets the finished jobs.
    await h.ctx.mongo.db.collection('import_batches').deleteMany({});
    await h.ctx.queues.imports.obliterate({ force: true });
    await importFile(h.ctx, [file, '--no-progress']);
    expect(await balance()).toBe(978n);
    expect(await h.ctx.mongo.collections.transactions.countDocuments({ account_tag: 'a0' })).toBe(2);
    expect((await auditLedger(h.ctx.mongo.collections)).differences).toEqual([]);
  });
});
