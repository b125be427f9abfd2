import { readFileSync, existsSync } from 'node:fs';
import { createTestContext, TestContext } from '../../support/harness';
import { startWorkerProcess, WorkerProcess } from '../../support/processes';
import { balances, Call, csvOf, importFile, seedImportData, summaryOf, tempFile } from './support';

/**
 * A CDR file with good, invalid, refused and duplicate lines, imported through the real CLI into a real
 * worker process: the summary and the reject file are exact, and importing it again charges nothing.
 */
describe('rating import: summary, rejects and reruns', () => {
  let ctx: TestContext;
  let worker: WorkerProcess;

  beforeAll(async () => {
    ctx = await createTestContext({ JOB_LOCK_MS: '2000' });
    await seedImportData(ctx, 5);
    // Recorded before the import: the file's line for it is a duplicate.
    await ctx.mongo.collections.transactions.insertOne({
      _id: 'existing-record',
      transaction_tag: 'old',
      account_tag: 'a1',
      origin_account_tag: 'a1',
      source: null,
      source_ip: null,
      destination: null,
      carrier_ip: null,
      tags: null,
      authorized: null,
      unauthorized_reason: null,
      destination_rate: null,
      timestamp_auth: null,
      timestamp_begin: null,
      timestamp_end: null,
      inbound: false,
      failed: false,
      duration: 0,
      fee: 0n,
      state: 'charged',
    });
    worker = await startWorkerProcess(ctx.config);
  });

  afterAll(async () => {
    await worker?.stop();
    await ctx?.destroy();
  });

  const good: Call[] = Array.from({ length: 40 }, (_, i) => ({ tag: `t${i}`, account: `a${i % 5}`, seconds: i + 1 }));
  const expectedCharge = (acct: string) => good.filter((c) => c.account === acct).reduce((s, c) => s + BigInt(c.seconds), 0n);

  it('reports every line and charges each call once', async () => {
    const file = tempFile(
      'cdrs.csv',
      csvOf(
        [...good, { tag: 't3', account: 'a3', seconds: 99 }, { tag: 'old', account: 'a1', seconds: 5 }],
        [
          'bad1,a0,4930111,4930222,not-a-date,2026-01-01T12:00:10Z', // invalid timestamp
          ',a0,4930111,4930222,2026-01-01T12:00:00Z,2026-01-01T12:00:10Z', // missing tag
          'x1,nobody,4930111,4930222,2026-01-01T12:00:00Z,2026-01-01T12:00:10Z', // unknown account (refused by the worker)
          'x2,a0,4930111,3399,2026-01-01T12:00:00Z,2026-01-01T12:00:10Z', // no rate (refused)
          'x3,a0,too,many,cells,here,2026-01-01T12:00:10Z', // wrong number of cells
        ],
      ),
    );
    const { code, output } = await importFile(ctx, [file, '--batch-size', '7', '--no-progress']);
    const s = summaryOf(output);
    expect(code).toBe(1);
    expect(s.lines).toBe('47');
    expect(s.accepted).toBe('44');
    expect(s.rejected).toBe(`5 (invalid 3, refused 2) -> ${file}.rejects.csv`);
    expect(s.duplicates).toBe('2');
    expect(s.rated).toBe('40');
    expect(s.charged).toBe(String(good.reduce((sum, c) => sum + c.seconds, 0)));

    const rejects = readFileSync(`${file}.rejects.csv`, 'utf8').trim().split('\n');
    expect(rejects[0]).toBe('line,reason,record');
    // The file's header row comes first, so that the reject file imports again once corrected (rejects.test.ts).
    expect(rejects[1]).toBe(
      '1,"header row, kept so that this file can be imported again","transaction_tag,account_tag,source,destination,timestamp_begin,timestamp_end"',
    );
    const byLine = new Map(rejects.slice(2).map((r) => [Number(r.split(',')[0]), r]));
    expect([...byLine.keys()].sort((a, b) => a - b)).toEqual([44, 45, 46, 47, 48]);
    expect(byLine.get(44)).toMatch(/^44,BAD_USER_INPUT: timestamp_begin: must be a datetime/);
    expect(byLine.get(45)).toMatch(/^45,BAD_USER_INPUT: transaction_tag: is required,/);
    expect(byLine.get(46)).toBe('46,NOT_FOUND: nobody,"x1,nobody,4930111,4930222,2026-01-01T12:00:00Z,2026-01-01T12:00:10Z"');
    expect(byLine.get(47)).toBe('47,UNREACHABLE_DESTINATION: a0,"x2,a0,4930111,3399,2026-01-01T12:00:00Z,2026-01-01T12:00:10Z"');
    expect(byLine.get(48)).toMatch(/^48,BAD_USER_INPUT: expected 6 cells but got 7,/);

    const after = await balances(ctx);
    for (let i = 0; i < 5; i++) expect(after.get(`a${i}`)).toBe(1_000_000n - expectedCharge(`a${i}`));
    const records = await ctx.mongo.collections.transactions.find({ transaction_tag: /^t/ }).toArray();
    expect(records).toHaveLength(40);
    expect(records.every((r) => r.state === 'imported' && r.fee === BigInt(r.duration))).toBe(true);
    expect(records.find((r) => r.transaction_tag === 't3')!.duration).toBe(4); // the first line of t3 won
  });

  it('a second import of the same calls, and of the same file, charges nothing', async () => {
    const before = await balances(ctx);
    const file = tempFile('again.csv', csvOf(good));
    const first = await importFile(ctx, [file, '--batch-size', '7', '--no-progress']);
    // Same calls under another file: every line is a duplicate of the first import.
    expect(first.code).toBe(0);
    expect(summaryOf(first.output)).toMatchObject({ accepted: '40', duplicates: '40', rated: '0', charged: '0' });
    const second = await importFile(ctx, [file, '--no-progress']);
    expect(second.code).toBe(0);
    expect(summaryOf(second.output)).toMatchObject({
      accepted: '40',
      duplicates: '40 (6 batches finished by an earlier run)',
      rated: '0',
      charged: '0',
    });
    expect(existsSync(`${file}.rejects.csv`)).toBe(false);
    expect(await balances(ctx)).toEqual(before);
  });

  it('refuses to reuse an --import-id for other calls: their batches would be answered as finished and their calls never written', async () => {
    const first: Call[] = [1, 2, 3].map((i) => ({ tag: `reuse-a${i}`, account: 'a2', seconds: i }));
    const other: Call[] = [1, 2, 3].map((i) => ({ tag: `reuse-b${i}`, account: 'a3', seconds: i }));
    const opts = ['--import-id', 'reused-id', '--batch-size', '2', '--no-progress'];
    expect((await importFile(ctx, [tempFile('first.csv', csvOf(first)), ...opts])).code).toBe(0);
    const before = await balances(ctx);
    const again = await importFile(ctx, [tempFile('other.csv', csvOf(other)), ...opts]);
    expect(again.code).not.toBe(0);
    expect(again.output).toMatch(/other lines/);
    expect(await ctx.mongo.collections.transactions.countDocuments({ transaction_tag: { $in: other.map((c) => c.tag) } })).toBe(0);
    expect(await balances(ctx)).toEqual(before);
    // The same calls again under the id are a rerun, as before: nothing charged twice.
    const rerun = await importFile(ctx, [tempFile('first.csv', csvOf(first)), ...opts]);
    expect(rerun.code).toBe(0);
    expect(summaryOf(rerun.output)).toMatchObject({ rated: '0', charged: '0' });
    expect(await balances(ctx)).toEqual(before);
  }, 120_000);

  it('refuses a different batch size for the same import, and a bad header', async () => {
    const file = tempFile('again.csv', csvOf(good));
    await importFile(ctx, [file, '--batch-size', '7', '--no-progress']);
    const other = await importFile(ctx, [file, '--batch-size', '8', '--no-progress']);
    expect(other.code).toBe(2);
    expect(other.output).toMatch(/was started with --batch-size 7/);
    const bad = await importFile(ctx, [tempFile('bad.csv', 'transaction_tag,acount_tag\nx,y\n'), '--no-progress']);
    expect(bad.code).toBe(2);
    expect(bad.output).toMatch(/unknown column "acount_tag"/);
  });
});
