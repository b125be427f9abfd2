import { AgentHarness, startAgentHarness, waitFor } from '../../support/agent-harness';
import { account, perSecondRating, seed } from '../../support/seed';

/**
 * Issue 36: a worker process that runs the processing queue too (the default layout) charges the calls
 * its end jobs ended right after answering, in the end's own job: no processing job is queued, and
 * every party is charged once. Rates: 60 per minute in 1 s steps with a connect fee of 1 (n s cost n + 1).
 */
describe('an ended call is charged in its end job', () => {
  let h: AgentHarness;
  const balance = async (tag: string) => (await h.ctx.mongo.collections.accounts.findOne({ account_tag: tag }))!.balance;
  const running = async (tag: string) => (await h.ctx.mongo.collections.accounts.findOne({ account_tag: tag }))!.running_transactions;
  const call = (tag: string, accountTag: string) => ({
    transaction_tag: tag,
    account_tag: accountTag,
    source: '100',
    destination: '391234',
    timestamp_begin: '2026-11-21T10:00:00Z',
  });

  beforeAll(async () => {
    h = await startAgentHarness(1);
    await seed(h.ctx, {
      ...perSecondRating(),
      accounts: [account('kid', { balance: 1000n, linked_accounts: ['mum'] }), account('mum', { balance: 1000n })],
    });
  });

  afterAll(() => h?.close());

  it('charges caller and parent without a processing job, once; an end sent again answers ALREADY_ENDED', async () => {
    expect((await h.rest('/v1/begin_transaction', call('i1', 'kid'))).body).toMatchObject({ ok: true });
    const end = { transaction_tag: 'i1', account_tag: 'kid', timestamp_end: '2026-11-21T10:00:30Z' };
    expect((await h.rest('/v1/end_transaction', end)).body).toMatchObject({ ok: true });
    await waitFor(async () => (await running('kid')).length === 0 && (await running('mum')).length === 0, 'both parties charged');
    expect(await balance('kid')).toBe(1000n - 31n);
    expect(await balance('mum')).toBe(1000n - 31n);
    const counts = await h.ctx.queues.processing.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed');
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(0);
    expect((await h.rest('/v1/end_transaction', end)).body).toMatchObject({ ok: false, reason: 'ALREADY_ENDED' });
    expect(await balance('kid')).toBe(1000n - 31n);
    expect(await h.ctx.mongo.collections.transactions.countDocuments({ transaction_tag: 'i1', state: 'charged' })).toBe(2);
  });
});
