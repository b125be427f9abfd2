import { spawn } from 'node:child_process';
import path from 'node:path';
import { AgentHarness, startAgentHarness } from '../../support/agent-harness';
import { account, perSecondRating, seed } from '../../support/seed';

const root = path.resolve(__dirname, '..', '..', '..');

/** `rating audit` (the built CLI) on a database the engine wrote through the agent. */
describe('rating audit', () => {
  let h: AgentHarness;

  const audit = (...args: string[]) =>
    new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, [path.join(root, 'dist', 'cli', 'rating.js'), 'audit', ...args], {
        env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'warn', MONGO_DB: h.ctx.config.mongoDb },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      child.once('exit', (code) => resolve({ code, output }));
    });

  beforeAll(async () => {
    h = await startAgentHarness(1);
    await seed(h.ctx, {
      ...perSecondRating(),
      accounts: [account('caller', { balance: 500n, linked_accounts: ['reseller'] }), account('reseller', { balance: 900n })],
    });
  });

  afterAll(() => h?.close());

  it('finds no difference after charges and refunds, and names an account whose balance was changed behind the ledger', async () => {
    const call = (tag: string, seconds: number) => ({
      transaction_tag: tag,
      account_tag: 'caller',
      source: '1',
      destination: '391234',
      timestamp_begin: '2026-11-21T10:00:00Z',
      timestamp_end: new Date(Date.parse('2026-11-21T10:00:00Z') + seconds * 1000).toISOString(),
    });
    for (const [tag, seconds] of [
      ['a', 10],
      ['b', 20],
      ['c', 30],
    ] as const) {
      expect((await h.rest('/v1/record_transaction', call(tag, seconds))).body).toMatchObject({ ok: true, reason: null });
    }
    expect((await h.rest('/v1/rollback_transaction', { transaction_tag: 'b', account_tag: 'caller' })).body).toMatchObject({
      ok: true,
      reason: null,
    });

    const clean = await audit('--json');
    expect(clean.code).toBe(0);
    const report = JSON.parse(clean.output) as Record<string, unknown>;
    // Charges a, b, c and refund b, for the caller and the reseller each.
    expect(report).toMatchObject({ accounts: 2, ledger_entries: 8, records: 4, pending_markers: 0, records_in_flight: 0, differences: [] });

    await h.ctx.mongo.collections.accounts.updateOne({ account_tag: 'reseller' }, { $inc: { balance: 7n } });
    const dirty = await audit();
    expect(dirty.code).toBe(1);
    expect(dirty.output).toContain('differences:        1');
    expect(dirty.output).toContain('reseller: balance off by 7, records off by 0');
  });
});
