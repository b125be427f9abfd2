import { AgentHarness, QUEUED_PROCESSING, startAgentHarness, waitFor } from '../../support/agent-harness';
import { account, carrier, pricelist, rate, seed } from '../../support/seed';
import type { ImportBatchDoc } from '../../../src/shared/domain/ledger';

/**
 * The spec's lifecycle table, through the agent's HTTP endpoints, with two real worker processes.
 */
describe('transaction lifecycle through the agent', () => {
  let h: AgentHarness;

  beforeAll(async () => {
    h = await startAgentHarness(2, QUEUED_PROCESSING);
    await seed(h.ctx, {
      carriers: [carrier('c1', { host: '10.0.0.1', port: 5060 }), carrier('c2', { host: '10.0.0.2', port: 5080, protocol: 'TCP' })],
      pricelists: [pricelist('pl')],
      rates: [
        rate('pl', 'c1', '3932', { rate: 20, rate_increment: 60 }),
        rate('pl', 'c2', '3932', { rate: 30, rate_increment: 60 }),
        rate('pl', 'c1', '39', { rate: 50 }),
      ],
      accounts: [account('alice', { balance: 100n })],
    });
  });

  afterAll(() => h?.close());

  const balance = async (tag: string) => (await h.ctx.mongo.collections.accounts.findOne({ account_tag: tag }))!.balance;
  const running = async (tag: string) => (await h.ctx.mongo.collections.accounts.findOne({ account_tag: tag }))!.running_transactions;

  it('begin -> running entry; end -> ended awaiting processing; processing -> record and debit (spec sample)', async () => {
    await h.ctx.queues.processing.pause();
    const begin = await h.gql(
      `mutation { beginTransaction(transaction_tag: "t1", account_tag: "alice", source: "100", destination: "393299", timestamp_begin: "2026-11-21T10:00:00Z") { ok reason } }`,
    );
    expect(begin.body).toEqual({ data: { beginTransaction: { ok: true, reason: null } } });
    let entries = await running('alice');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      transaction_tag: 't1',
      in_progress: true,
      inbound: false,
      carrier_ip: '10.0.0.1:5060',
      timestamp_end: null,
    });
    expect(entries[0].rate).toMatchObject({ rate: 20, carrier_tag: 'c1', prefix: '3932' });

    const end = await h.rest('/v1/end_transaction', { transaction_tag: 't1', account_tag: 'alice', timestamp_end: '2026-11-21T10:00:38Z' });
    expect(end).toMatchObject({ status: 200, body: { ok: true, reason: null } });
    entries = await running('alice');
    expect(entries[0]).toMatchObject({ in_progress: false });
    expect(entries[0].timestamp_end).toEqual(new Date('2026-11-21T10:00:38Z'));
    expect(await balance('alice')).toBe(100n);

    await h.ctx.queues.processing.resume();
    await waitFor(async () => (await running('alice')).length === 0, 'processing');
    expect(await balance('alice')).toBe(80n);
    const record = await h.ctx.mongo.collections.transactions.findOne({ account_tag: 'alice', transaction_tag: 't1' });
    expect(record).toMatchObject({
      duration: 38,
      fee: 20n,
      carrier_ip: '10.0.0.1:5060',
      authorized: true,
      failed: false,
      inbound: false,
      state: 'charged',
    });
    expect(record!.destination_rate).toMatchObject({
      pricelist_tag: 'pl',
      carrier_tag: 'c1',
      prefix: '3932',
      connect_fee: 0,
      rate: 20,
      rate_increment: 60,
      interval_start: 0,
    });
  });
});

describe('agent operations and refusals', () => {
  let h: AgentHarness;
  const accounts = () => h.ctx.mongo.collections.accounts;
  const transactions = () => h.ctx.mongo.collections.transactions;
  const balance = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.balance;
  const running = async (tag: string) => (await accounts().findOne({ account_tag: tag }))!.running_transactions;
  const call = (tag: string, accountTag: string, extra: Record<string, string> = {}): Record<string, string> => ({
    transaction_tag: tag,
    account_tag: accountTag,
    source: '100',
    destination: '393299',
    ...extra,
  });

  beforeAll(async () => {
    h = await startAgentHarness(2, QUEUED_PROCESSING);
    await seed(h.ctx, {
      carriers: [
        carrier('c1', { host: '10.0.0.1', port: 5060 }),
        carrier('c2', { host: '10.0.0.2', port: 5080, protocol: 'TCP' }),
        carrier('off', { active: false }),
      ],
      pricelists: [pricelist('pl'), pricelist('parent-pl')],
      rates: [
        rate('pl', 'c1', '3932', { rate: 20, rate_increment: 60 }),
        rate('pl', 'c2', '3932', { rate: 30, rate_increment: 60 }),
        rate('pl', 'off', '3932', { rate: 1 }),
        rate('parent-pl', 'c2', '39', { rate: 10, rate_increment: 1, connect_fee: 5 }),
      ],
      accounts: [
        account('rich', { balance: 1_000_000n }),
        account('poor', { balance: 10n }),
        account('inactive', { active: false }),
        account('limited', { max_concurrent_transactions: 2, balance: 1_000_000n }),
        account('post', { type: 'POSTPAID', balance: 0n }),
        account('parent', { pricelist_tags: ['parent-pl'], balance: 1_000n }),
        account('child', { linked_accounts: ['parent'], balance: 1_000n }),
        account('orphan-parent', { active: false, pricelist_tags: ['parent-pl'] }),
        account('child2', { linked_accounts: ['orphan-parent'], balance: 1_000n }),
        account('callee', { max_concurrent_transactions: 1, balance: 0n }),
        account('preferring', { carrier_tags: ['c2'], balance: 1_000_000n }),
        account('forced', { carrier_tags_override: ['c2'], balance: 1_000_000n }),
        account('parallel', { max_concurrent_transactions: 10, balance: 1_000_000n }),
        account('recorder', { balance: 100_000n }),
        account('authz', { balance: 1_000_000n }),
      ],
    });
  });

  afterAll(() => h?.close());

  it.each([
    ['NOT_FOUND', call('r1', 'nobody')],
    ['NOT_ACTIVE', call('r2', 'inactive')],
    ['UNREACHABLE_DESTINATION', call('r3', 'rich', { destination: '44123' })],
    ['BALANCE_INSUFFICIENT', call('r4', 'poor')],
    ['NOT_ACTIVE', call('r5', 'child2')],
  ])('begin refuses with %s and leaves nothing behind', async (reason, input) => {
    const result = await h.rest('/v1/begin_transaction', input);
    expect(result).toMatchObject({ status: 200, body: { ok: false, reason } });
    const stored = await accounts().find({ 'running_transactions.transaction_tag': input.transaction_tag }).toArray();
    expect(stored).toEqual([]);
  });

  it('refuses a begin past max_concurrent_transactions and a duplicate tag', async () => {
    for (const tag of ['l1', 'l2'])
      expect((await h.rest('/v1/begin_transaction', call(tag, 'limited'))).body).toMatchObject({ ok: true, reason: null });
    expect((await h.rest('/v1/begin_transaction', call('l3', 'limited'))).body).toMatchObject({
      ok: false,
      reason: 'TOO_MANY_RUNNING_TRANSACTIONS',
    });
    expect((await h.rest('/v1/rollback_transaction', { transaction_tag: 'l2', account_tag: 'limited' })).body).toMatchObject({
      ok: true,
      reason: null,
    });
    expect((await h.rest('/v1/begin_transaction', call('l1', 'limited'))).body).toMatchObject({
      ok: false,
      reason: 'DUPLICATE_TRANSACTION',
    });
    expect((await running('limited')).map((e) => e.transaction_tag)).toEqual(['l1']);
  });

  it('parallel begins never exceed the concurrency limit', async () => {
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        h.rest<{ ok: boolean; reason: string | null }>('/v1/begin_transaction', call(`p${i}`, 'parallel')),
      ),
    );
    expect(results.filter((r) => r.body.ok)).toHaveLength(10);
    expect(results.filter((r) => !r.body.ok).every((r) => r.body.reason === 'TOO_MANY_RUNNING_TRANSACTIONS')).toBe(true);
    expect(await running('parallel')).toHaveLength(10);
  });

  it('end of an unknown call is NOT_FOUND; ending twice is ALREADY_ENDED and changes nothing', async () => {
    expect((await h.rest('/v1/end_transaction', { transaction_tag: 'zz', account_tag: 'rich' })).body).toMatchObject({
      ok: false,
      reason: 'NOT_FOUND',
    });
    await h.ctx.queues.processing.pause();
    try {
      await h.rest('/v1/begin_transaction', call('e1', 'post'));
      expect(
        (await h.rest('/v1/end_transaction', { transaction_tag: 'e1', account_tag: 'post', timestamp_end: '2030-01-01T00:00:00' })).body,
      ).toMatchObject({ ok: true, reason: null });
      const ended = (await running('post'))[0];
      expect((await h.rest('/v1/end_transaction', { transaction_tag: 'e1', account_tag: 'post' })).body).toMatchObject({
        ok: false,
        reason: 'ALREADY_ENDED',
      });
      expect((await running('post'))[0]).toEqual(ended);
    } finally {
      await h.ctx.queues.processing.resume();
    }
    await waitFor(async () => (await running('post')).length === 0, 'processing of e1');
  });

  it('a prepaid begin counts running calls against the available balance', async () => {
    await accounts().insertOne(account('tight', { balance: 40n }));
    expect((await h.rest('/v1/begin_transaction', call('tight1', 'tight'))).body).toMatchObject({ ok: true, reason: null });
    expect((await h.rest('/v1/begin_transaction', call('tight2', 'tight'))).body).toMatchObject({ ok: true, reason: null });
    // Each running call already owes its first minute (20): nothing is left for a third.
    expect((await h.rest('/v1/begin_transaction', call('tight3', 'tight'))).body).toMatchObject({
      ok: false,
      reason: 'BALANCE_INSUFFICIENT',
    });
  });

  it('bills linked (parent) accounts on their own pricelists, and the caller on its own', async () => {
    await h.rest('/v1/begin_transaction', call('k1', 'child', { timestamp_begin: '2026-11-21T10:00:00' }));
    expect((await running('parent')).map((e) => [e.transaction_tag, e.rate?.pricelist_tag])).toEqual([['k1', 'parent-pl']]);
    await h.rest('/v1/end_transaction', { transaction_tag: 'k1', account_tag: 'child', timestamp_end: '2026-11-21T10:00:38' });
    await waitFor(async () => (await running('child')).length === 0 && (await running('parent')).length === 0, 'processing of k1');
    expect(await balance('child')).toBe(1000n - 20n);
    // parent: connect 5 + ceil(10 * 38 / 60) = 5 + 7
    expect(await balance('parent')).toBe(1000n - 12n);
    expect(await transactions().countDocuments({ transaction_tag: 'k1' })).toBe(2);
  });

  it('inbound calls hold an entry on the receiving account, count against its limit and cost it nothing', async () => {
    const first = await h.rest('/v1/begin_transaction', call('in1', 'rich', { destination_account_tag: 'callee' }));
    expect(first.body).toMatchObject({ ok: true, reason: null });
    expect((await running('callee'))[0]).toMatchObject({ transaction_tag: 'in1', inbound: true, in_progress: true });
    const second = await h.rest('/v1/begin_transaction', call('in2', 'rich', { destination_account_tag: 'callee' }));
    expect(second.body).toMatchObject({ ok: false, reason: 'TOO_MANY_RUNNING_TRANSACTIONS' });
    expect((await running('rich')).some((e) => e.transaction_tag === 'in2')).toBe(false);
    await h.rest('/v1/end_transaction', { transaction_tag: 'in1', account_tag: 'rich' });
    await waitFor(async () => (await running('callee')).length === 0, 'processing of in1');
    expect(await balance('callee')).toBe(0n);
    expect(await transactions().findOne({ account_tag: 'callee', transaction_tag: 'in1' })).toMatchObject({ inbound: true, fee: 0n });
  });

  it('orders carriers by cost, preferred carriers first, forced carriers only', async () => {
    const auth = (accountTag: string) =>
      h.gql(
        `{ authorization(account_tag: "${accountTag}", destination: "393299") { authorized unauthorized_reason max_available_units balance carriers } }`,
      );
    expect((await auth('authz')).body.data).toEqual({
      authorization: {
        authorized: true,
        unauthorized_reason: null,
        max_available_units: 14400,
        balance: '1000000',
        carriers: ['UDP:10.0.0.1:5060', 'TCP:10.0.0.2:5080'],
      },
    });
    expect(((await auth('preferring')).body.data as { authorization: { carriers: string[] } }).authorization.carriers).toEqual([
      'TCP:10.0.0.2:5080',
      'UDP:10.0.0.1:5060',
    ]);
    expect(((await auth('forced')).body.data as { authorization: { carriers: string[] } }).authorization.carriers).toEqual([
      'TCP:10.0.0.2:5080',
    ]);
    // poor has 10: not even the first minute at 20.
    expect((await auth('poor')).body.data).toMatchObject({
      authorization: { authorized: false, unauthorized_reason: 'BALANCE_INSUFFICIENT', max_available_units: 0 },
    });
    const units = await h.rest('/v1/authorization', { account_tag: 'recorder', destination: '393299' });
    // 100000 at 20 per started minute: 5000 minutes, capped at 4 hours.
    expect(units.body).toMatchObject({ authorized: true, max_available_units: 14400 });
    const nobody = await h.rest('/v1/authorization', { account_tag: 'nobody', destination: '393299' });
    expect(nobody.body).toMatchObject({ authorized: false, unauthorized_reason: 'NOT_FOUND' });
  });

  it('records a finished call once, debits it, refuses the duplicate; rollback refunds it', async () => {
    const input = call('rec1', 'recorder', { timestamp_begin: '2026-11-21T10:00:00Z', timestamp_end: '2026-11-21T10:01:01Z' });
    expect(
      (
        await h.gql(
          `mutation($b: String!, $e: String!) { recordTransaction(transaction_tag: "rec1", account_tag: "recorder", source: "100", destination: "393299", timestamp_begin: $b, timestamp_end: $e) { ok reason } }`,
          { b: input.timestamp_begin, e: input.timestamp_end },
        )
      ).body.data,
    ).toEqual({ recordTransaction: { ok: true, reason: null } });
    expect(await balance('recorder')).toBe(100_000n - 40n);
    expect((await h.rest('/v1/record_transaction', input)).body).toMatchObject({ ok: false, reason: 'DUPLICATE_TRANSACTION' });
    expect(await balance('recorder')).toBe(100_000n - 40n);
    expect(await transactions().findOne({ account_tag: 'recorder', transaction_tag: 'rec1' })).toMatchObject({
      authorized: null,
      failed: false,
      duration: 61,
      fee: 40n,
    });

    expect((await h.rest('/v1/rollback_transaction', { transaction_tag: 'rec1', account_tag: 'recorder' })).body).toMatchObject({
      ok: true,
      reason: null,
    });
    expect(await balance('recorder')).toBe(100_000n);
    expect(await transactions().findOne({ account_tag: 'recorder', transaction_tag: 'rec1' })).toBeNull();
    expect((await h.rest('/v1/rollback_transaction', { transaction_tag: 'rec1', account_tag: 'recorder' })).body).toMatchObject({
      ok: false,
      reason: 'NOT_FOUND',
    });
    expect(await balance('recorder')).toBe(100_000n);
  });

  it('refunds an imported record only when its batch debited it, waiting for a batch still running', async () => {
    await accounts().insertOne(account('imported', { balance: 70n }));
    const batches = h.ctx.mongo.db.collection<ImportBatchDoc>('import_batches');
    // What storeBatchResult writes once a batch's debits are applied.
    const finished = (jobTimestamp: number): Pick<ImportBatchDoc, 'result' | 'job_timestamp'> => ({
      job_timestamp: jobTimestamp,
      result: { batch_id: 'x', lines: 1, rated: 1, duplicate_lines: [], refused: [], charged: '30', charged_linked: '0', replayed: false },
    });
    const claim = { import_id: 'f', batch: 0, claimed_at: new Date() };
    await batches.insertMany([
      { _id: 'imp/f/0', ...claim, ...finished(1) },
      { _id: 'imp/f/1', ...claim, batch: 1 },
    ]);
    // The ledger entries of the debits batches 0 and 1 made (applyBatchDebits); batch 2 debited nothing.
    const debit = (batch: string) => ({
      _id: `import:${batch}:imported`,
      account_tag: 'imported',
      amount: -30n,
      kind: 'import' as const,
      transaction_tag: null,
      ref: batch,
      at: new Date(),
    });
    await h.ctx.mongo.collections.ledger.insertMany([debit('imp/f/0'), debit('imp/f/1')]);
    const base = {
      account_tag: 'imported',
      origin_account_tag: 'imported',
      source: '1',
      source_ip: null,
      destination: '3932',
      carrier_ip: null,
      tags: null,
      authorized: null,
      unauthorized_reason: null,
      destination_rate: null,
      timestamp_auth: null,
      timestamp_begin: new Date(),
      timestamp_end: new Date(),
      inbound: false,
      failed: false,
      duration: 60,
      fee: 30n,
      state: 'imported' as const,
    };
    await transactions().insertMany([
      { ...base, _id: 'imp-done', transaction_tag: 'i1', charge_op: 'imp/f/0' },
      { ...base, _id: 'imp-running', transaction_tag: 'i2', charge_op: 'imp/f/1' },
      { ...base, _id: 'imp-unknown', transaction_tag: 'i3', charge_op: 'imp/f/2' },
    ]);
    expect((await h.rest('/v1/rollback_transaction', { transaction_tag: 'i1', account_tag: 'imported' })).body).toMatchObject({
      ok: true,
      reason: null,
    });
    expect(await balance('imported')).toBe(100n);

    // Batch 1 has not stored its result: the rollback waits, touching nothing, until it does.
    const pending = h.rest('/v1/rollback_transaction', { transaction_tag: 'i2', account_tag: 'imported' });
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await transactions().findOne({ _id: 'imp-running' })).not.toBeNull();
    expect(await balance('imported')).toBe(100n);
    await batches.updateOne({ _id: 'imp/f/1' }, { $set: finished(2) });
    expect((await pending).body).toMatchObject({ ok: true, reason: null });
    expect(await balance('imported')).toBe(130n);

    // No batch document and no debit in the ledger: nothing is refunded.
    expect((await h.rest('/v1/rollback_transaction', { transaction_tag: 'i3', account_tag: 'imported' })).body).toMatchObject({
      ok: true,
      reason: null,
    });
    expect(await balance('imported')).toBe(130n);
    expect(await transactions().countDocuments({ account_tag: 'imported' })).toBe(0);
  });

  it('refunds a record of a file batch only once its settlement debited it, waiting until then', async () => {
    await accounts().insertOne(account('settled', { balance: 100n }));
    const batches = h.ctx.mongo.collections.importBatches;
    // A finished file batch whose debit waits for a settlement (storeDeferredBatchResult).
    await batches.insertOne({
      _id: 'imp/g/0',
      import_id: 'g',
      batch: 0,
      claimed_at: new Date(),
      job_timestamp: 1,
      result: {
        batch_id: 'imp/g/0',
        lines: 1,
        rated: 1,
        duplicate_lines: [],
        refused: [],
        charged: '30',
        charged_linked: '0',
        replayed: false,
      },
      debits: [{ account_tag: 'settled', amount: 30n }],
      settle_pending: true,
    });
    await transactions().insertOne({
      _id: 'imp-settling',
      account_tag: 'settled',
      origin_account_tag: 'settled',
      transaction_tag: 's1',
      source: '1',
      source_ip: null,
      destination: '3932',
      carrier_ip: null,
      tags: null,
      authorized: null,
      unauthorized_reason: null,
      destination_rate: null,
      timestamp_auth: null,
      timestamp_begin: new Date(),
      timestamp_end: new Date(),
      inbound: false,
      failed: false,
      duration: 60,
      fee: 30n,
      state: 'imported',
      charge_op: 'imp/g/0',
    });

    const pending = h.rest('/v1/rollback_transaction', { transaction_tag: 's1', account_tag: 'settled' });
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await transactions().findOne({ _id: 'imp-settling' })).not.toBeNull();
    expect(await balance('settled')).toBe(100n);
    // What the settlement leaves: the batch claimed, its debit applied and in the ledger, the settlement done.
    const settlement = 'imp/g/s/1';
    await batches.insertOne({
      _id: settlement,
      import_id: 'g',
      batch: -1,
      claimed_at: new Date(),
      members: ['imp/g/0'],
      debits_settled: true,
    });
    await h.ctx.mongo.collections.ledger.insertOne({
      _id: `import:${settlement}:settled`,
      account_tag: 'settled',
      amount: -30n,
      kind: 'import',
      transaction_tag: null,
      ref: settlement,
      at: new Date(),
    });
    await accounts().updateOne({ account_tag: 'settled' }, { $inc: { balance: -30n } });
    await batches.updateOne({ _id: 'imp/g/0' }, { $set: { settled_by: settlement }, $unset: { settle_pending: '' } });
    expect((await pending).body).toMatchObject({ ok: true, reason: null });
    expect(await balance('settled')).toBe(100n);
    expect(await transactions().countDocuments({ account_tag: 'settled' })).toBe(0);
  });

  it('rolls back a running call without charge', async () => {
    await h.rest('/v1/begin_transaction', call('rb1', 'rich'));
    expect((await h.rest('/v1/rollback_transaction', { transaction_tag: 'rb1', account_tag: 'rich' })).body).toMatchObject({
      ok: true,
      reason: null,
    });
    expect((await running('rich')).some((e) => e.transaction_tag === 'rb1')).toBe(false);
    expect(await transactions().findOne({ account_tag: 'rich', transaction_tag: 'rb1' })).toBeNull();
  });

  it('parallel records debit exactly', async () => {
    await accounts().insertOne(account('bulk', { balance: 1_000_000n }));
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        h.rest<{ ok: boolean }>(
          '/v1/record_transaction',
          call(`pr${i}`, 'bulk', { timestamp_begin: '2026-11-21T10:00:00', timestamp_end: `2026-11-21T10:0${i % 5}:30` }),
        ),
      ),
    );
    expect(results.every((r) => r.body.ok)).toBe(true);
    // durations 30, 90, 150, 210, 270 s -> 1, 2, 3, 4, 5 started minutes at 20: 20+40+60+80+100 = 300 per 5 calls
    expect(await balance('bulk')).toBe(1_000_000n - 8n * 300n);
  });

  it('answers bad input with BAD_USER_INPUT naming the field and changes nothing', async () => {
    const gql = await h.gql(
      `mutation { beginTransaction(transaction_tag: "b1", account_tag: "rich", source: "1", destination: "393299", timestamp_begin: "yesterday") { ok } }`,
    );
    expect(gql.status).toBe(200);
    expect(gql.body.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    expect(gql.body.errors?.[0].message).toContain('timestamp_begin');
    const rest = await h.rest<{ error: { code: string; field: string } }>('/v1/record_transaction', {
      transaction_tag: 'b2',
      account_tag: 'rich',
      source: '1',
      destination: '3932',
    });
    expect(rest.status).toBe(400);
    expect(rest.body.error).toMatchObject({ code: 'BAD_USER_INPUT', field: 'timestamp_begin' });
    expect((await running('rich')).some((e) => ['b1', 'b2'].includes(e.transaction_tag))).toBe(false);
  });
});
