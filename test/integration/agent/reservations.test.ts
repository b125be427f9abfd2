import { AgentHarness, startAgentHarness, waitFor } from '../../support/agent-harness';
import { account, carrier, pricelist, rate, seed } from '../../support/seed';

type Auth = {
  authorized: boolean;
  unauthorized_reason: string | null;
  unauthorized_account_tag: string | null;
  max_available_units: number;
};
type Answer = { ok: boolean; reason: string | null };

/**
 * Reservations at authorization (issue 11, docs/DESIGN.md section 4): an authorization with a
 * transaction_tag holds a concurrency slot on every party until begin turns it into the running
 * entry, rollback releases it, or it expires (RESERVATION_SECONDS, 2 s here).
 */
describe('concurrency reservations at authorization', () => {
  let h: AgentHarness;
  const accounts = () => h.ctx.mongo.collections.accounts;
  const entries = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.running_transactions;
  const authorize = async (accountTag: string, transactionTag?: string) =>
    (
      await h.rest<Auth>('/v1/authorization', {
        account_tag: accountTag,
        destination: '393299',
        ...(transactionTag ? { transaction_tag: transactionTag } : {}),
      })
    ).body;
  const op = async (path: string, body: Record<string, unknown>) => (await h.rest<Answer>(`/v1/${path}`, body)).body;
  const begin = (accountTag: string, tag: string) =>
    op('begin_transaction', { transaction_tag: tag, account_tag: accountTag, source: '100', destination: '393299' });

  beforeAll(async () => {
    h = await startAgentHarness(2, { RESERVATION_SECONDS: '2' });
    await seed(h.ctx, {
      carriers: [carrier('c1', { host: '10.0.0.1', port: 5060 })],
      pricelists: [pricelist('pl')],
      rates: [rate('pl', 'c1', '39', { rate: 60, rate_increment: 1 })],
      accounts: [
        account('par2', { max_concurrent_transactions: 2 }),
        account('conv1', { max_concurrent_transactions: 1 }),
        account('exp1', { max_concurrent_transactions: 1 }),
        account('rb1', { max_concurrent_transactions: 1 }),
        account('idem1', { max_concurrent_transactions: 1 }),
        account('free', { max_concurrent_transactions: 1 }),
        account('cdr1', { max_concurrent_transactions: 1, balance: 1000n }),
        account('parent1', { max_concurrent_transactions: 1 }),
        account('kid1', { linked_accounts: ['parent1'] }),
        account('kid2', { linked_accounts: ['parent1'] }),
        account('replay', { balance: 100_000n }),
        account('lateBegin', { max_concurrent_transactions: 1 }),
        account('drained', { max_concurrent_transactions: 1, balance: 1000n }),
        account('replayLimited', { balance: 100_000n, max_concurrent_transactions: 3 }),
      ],
    });
  });

  afterAll(() => h?.close());

  it('ten parallel authorizations on an account limited to 2: exactly two authorized, and never more than 2 entries', async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => authorize('par2', `p${i}`)));
    expect(answers.filter((a) => a.authorized)).toHaveLength(2);
    const refused = answers.filter((a) => !a.authorized);
    expect(refused).toHaveLength(8);
    for (const a of refused)
      expect(a).toMatchObject({
        unauthorized_reason: 'TOO_MANY_RUNNING_TRANSACTIONS',
        unauthorized_account_tag: 'par2',
        max_available_units: 0,
      });
    expect(await entries('par2')).toHaveLength(2);
    // A begin without a reservation finds no free slot either.
    expect(await begin('par2', 'other')).toMatchObject({ ok: false, reason: 'TOO_MANY_RUNNING_TRANSACTIONS' });
  });

  it('begin turns the reservation into the running entry (no second slot), end and processing free it', async () => {
    expect(await authorize('conv1', 'c1')).toMatchObject({ authorized: true });
    expect(await begin('conv1', 'c1')).toEqual(expect.objectContaining({ ok: true, reason: null }));
    const running = await entries('conv1');
    expect(running).toHaveLength(1);
    expect(running[0]).toMatchObject({ transaction_tag: 'c1', in_progress: true });
    expect(running[0].reserved_until ?? null).toBeNull();
    expect(running[0].rate).toMatchObject({ rate: 60 });
    expect(await authorize('conv1', 'c2')).toMatchObject({ authorized: false, unauthorized_reason: 'TOO_MANY_RUNNING_TRANSACTIONS' });
    // Past the reservation time the running call keeps its slot: it is no reservation any more.
    await new Promise((r) => setTimeout(r, 2200));
    expect(await authorize('conv1', 'c2')).toMatchObject({ authorized: false, unauthorized_reason: 'TOO_MANY_RUNNING_TRANSACTIONS' });
    expect(await op('end_transaction', { transaction_tag: 'c1', account_tag: 'conv1' })).toMatchObject({ ok: true });
    await waitFor(async () => (await entries('conv1')).length === 0, 'processing of c1');
    expect(await authorize('conv1', 'c2')).toMatchObject({ authorized: true });
  });

  it('an unused reservation expires and frees its slot', async () => {
    expect(await authorize('exp1', 'e1')).toMatchObject({ authorized: true });
    expect(await authorize('exp1', 'e2')).toMatchObject({ authorized: false, unauthorized_reason: 'TOO_MANY_RUNNING_TRANSACTIONS' });
    expect(await begin('exp1', 'e3')).toMatchObject({ ok: false, reason: 'TOO_MANY_RUNNING_TRANSACTIONS' });
    await new Promise((r) => setTimeout(r, 2200));
    expect(await begin('exp1', 'e3')).toMatchObject({ ok: true });
    const running = await entries('exp1');
    expect(running.map((e) => e.transaction_tag)).toEqual(['e3']);
  });

  // An expired reservation holds nothing: another call may have been authorized into its slot since.
  it('a begin after its reservation expired decides afresh: the slot another call took refuses it', async () => {
    expect(await authorize('lateBegin', 'l1')).toMatchObject({ authorized: true });
    await new Promise((r) => setTimeout(r, 2200));
    expect(await authorize('lateBegin', 'l2')).toMatchObject({ authorized: true });
    expect(await begin('lateBegin', 'l1')).toMatchObject({ ok: false, reason: 'TOO_MANY_RUNNING_TRANSACTIONS' });
    expect(await begin('lateBegin', 'l2')).toMatchObject({ ok: true });
    const running = await entries('lateBegin');
    expect(running.filter((e) => !e.reserved_until).map((e) => e.transaction_tag)).toEqual(['l2']);
    expect(running.length).toBeLessThanOrEqual(1);
  });

  it('a begin refused at its reservation (the balance drained since) releases the reservation with it', async () => {
    expect(await authorize('drained', 'dr1')).toMatchObject({ authorized: true });
    await accounts().updateOne({ account_tag: 'drained' }, { $set: { balance: 0n }, $inc: { rev: 1 } });
    expect(await begin('drained', 'dr1')).toMatchObject({ ok: false, reason: 'BALANCE_INSUFFICIENT' });
    expect(await entries('drained')).toEqual([]);
    await accounts().updateOne({ account_tag: 'drained' }, { $set: { balance: 1000n }, $inc: { rev: 1 } });
  });

  it('rollback releases a reservation; end of a call that was only authorized is NOT_FOUND and changes nothing', async () => {
    expect(await authorize('rb1', 'r1')).toMatchObject({ authorized: true });
    expect(await op('end_transaction', { transaction_tag: 'r1', account_tag: 'rb1' })).toMatchObject({ ok: false, reason: 'NOT_FOUND' });
    expect(await entries('rb1')).toHaveLength(1);
    expect(await op('rollback_transaction', { transaction_tag: 'r1', account_tag: 'rb1' })).toMatchObject({ ok: true });
    expect(await entries('rb1')).toHaveLength(0);
    expect(await authorize('rb1', 'r2')).toMatchObject({ authorized: true });
    const before = (await accounts().findOne({ account_tag: 'rb1' }))!.balance;
    expect(await op('rollback_transaction', { transaction_tag: 'r2', account_tag: 'rb1' })).toMatchObject({ ok: true });
    expect((await accounts().findOne({ account_tag: 'rb1' }))!.balance).toBe(before);
  });

  it('a repeated authorization of the same call holds one slot; one without a transaction_tag reserves nothing', async () => {
    expect(await authorize('idem1', 'i1')).toMatchObject({ authorized: true });
    expect(await authorize('idem1', 'i1')).toMatchObject({ authorized: true });
    expect(await entries('idem1')).toHaveLength(1);
    expect(await authorize('free')).toMatchObject({ authorized: true });
    expect(await authorize('free')).toMatchObject({ authorized: true });
    expect(await entries('free')).toHaveLength(0);
  });

  // A SIP caller chooses its Call-ID, which proxies send as the tag: a new INVITE reusing a running
  // call's Call-ID must not be authorized, or the proxy's rollback when it is cancelled would take back
  // the running call uncharged (docs/SIP.md, "The transaction tag").
  it.each(['replay', 'replayLimited'])(
    'an authorization of a tag already begun on %s is refused, and the running call is kept',
    async (tag) => {
      expect(await authorize(tag, 'live')).toMatchObject({ authorized: true });
      expect(await begin(tag, 'live')).toMatchObject({ ok: true });
      expect(await authorize(tag, 'live')).toMatchObject({
        authorized: false,
        unauthorized_reason: 'DUPLICATE_TRANSACTION',
        unauthorized_account_tag: tag,
        max_available_units: 0,
      });
      const running = await entries(tag);
      expect(running).toHaveLength(1);
      expect(running[0]).toMatchObject({ transaction_tag: 'live', in_progress: true });
      expect(running[0].reserved_until ?? null).toBeNull();
    },
  );

  it('recordTransaction of an authorized call releases its reservation', async () => {
    expect(await authorize('cdr1', 'd1')).toMatchObject({ authorized: true });
    expect(await entries('cdr1')).toHaveLength(1);
    const recorded = await op('record_transaction', {
      transaction_tag: 'd1',
      account_tag: 'cdr1',
      source: '100',
      destination: '393299',
      timestamp_begin: '2026-11-23T10:00:00Z',
      timestamp_end: '2026-11-23T10:00:05Z',
    });
    expect(recorded).toMatchObject({ ok: true });
    expect(await entries('cdr1')).toHaveLength(0);
    expect((await accounts().findOne({ account_tag: 'cdr1' }))!.balance).toBe(995n);
    expect(await authorize('cdr1', 'd2')).toMatchObject({ authorized: true });
  });

  it('a parent at its limit refuses the second child; the child keeps no reservation', async () => {
    expect(await authorize('kid1', 'k1')).toMatchObject({ authorized: true });
    expect(await entries('parent1')).toHaveLength(1);
    expect(await authorize('kid2', 'k1')).toMatchObject({
      authorized: false,
      unauthorized_reason: 'TOO_MANY_RUNNING_TRANSACTIONS',
      unauthorized_account_tag: 'parent1',
    });
    expect(await entries('kid2')).toHaveLength(0);
    // The first child's call goes on: begin converts both of its reservations.
    expect(await begin('kid1', 'k1')).toMatchObject({ ok: true });
    const [kid, parent] = [await entries('kid1'), await entries('parent1')];
    expect(kid).toHaveLength(1);
    expect(parent).toHaveLength(1);
    expect(parent[0]).toMatchObject({ origin_account_tag: 'kid1', in_progress: true });
  });
});
