import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse';
import { createTestContext, TestContext } from '../../support/harness';
import { startWorkerProcess, WorkerProcess } from '../../support/processes';
import { balances, importFile, seedImportData, summaryOf, tempFile } from './support';

/**
 * The reject file is where an operator corrects what the import could not take and imports it again
 * (docs/IMPORTS.md, "Rejects"). A record the CSV parser could not read used to be stored cut off where
 * the parser met the error (`t"2,a0,...` as `t"`), so there was nothing to correct. Here every kind of
 * reject comes back whole, under its line in the file, and the corrected reject file imports as is.
 */
describe('rating import: the reject file, corrected, imports again', () => {
  let ctx: TestContext;
  let worker: WorkerProcess;

  beforeAll(async () => {
    ctx = await createTestContext({ JOB_LOCK_MS: '2000' });
    await seedImportData(ctx, 3);
    worker = await startWorkerProcess(ctx.config);
  });

  afterAll(async () => {
    await worker?.stop();
    await ctx?.destroy();
  });

  const call = (tag: string, account: string, seconds: number) =>
    `${tag},${account},4930111,4930222,2026-01-01T12:00:00Z,2026-01-01T12:00:${String(seconds).padStart(2, '0')}Z`;

  /** `line,reason,record` rows of a reject file. */
  async function rejectsOf(path: string): Promise<string[][]> {
    return new Promise((resolve, reject) =>
      parse(readFileSync(path), { record_delimiter: ['\r\n', '\n'] }, (err, rows: string[][]) => (err ? reject(err) : resolve(rows))),
    );
  }

  const cell = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);

  it('keeps unreadable records whole, and the corrected reject file charges exactly the missing calls', async () => {
    const lines = [
      'transaction_tag,account_tag,source,destination,timestamp_begin,timestamp_end',
      call('r1', 'a0', 10), // line 2
      call('r"2', 'a0', 11), // 3: a quote inside an unquoted cell
      call('r3', 'a1', 12).replace('2026-01-01T12:00:00Z', 'yesterday'), // 4: invalid
      call('r4', 'nobody', 13), // 5: refused by the worker
      `"r5"x,a1,4930111,4930222,2026-01-01T12:00:00Z,\r\n"2026-01-01T12:00:14Z"`, // 6-7: a quote closed too early runs on to line 7
      call('r6', 'a2', 15), // 8
      `"r7,a2,4930111,4930222,2026-01-01T12:00:00Z,2026-01-01T12:00:16Z`, // 9: the last line, cut before its closing quote
    ];
    const file = tempFile('cdrs.csv', lines.join('\n'));
    const first = await importFile(ctx, [file, '--no-progress']);
    expect(first.code).toBe(1);
    expect(summaryOf(first.output)).toMatchObject({ lines: '7', accepted: '3', rated: '2' });

    const rows = await rejectsOf(`${file}.rejects.csv`);
    expect(rows[0]).toEqual(['line', 'reason', 'record']);
    const byLine = new Map(rows.slice(1).map(([line, reason, record]) => [Number(line), { reason, record }]));
    // The header comes first, so that the file can be imported again on its own.
    expect(byLine.get(1)?.record).toBe(lines[0]);
    expect([...byLine.keys()].sort((a, b) => a - b)).toEqual([1, 3, 4, 5, 7, 9]);
    expect(byLine.get(3)).toEqual({ reason: expect.stringMatching(/^BAD_USER_INPUT: Invalid Opening Quote/), record: lines[2] });
    expect(byLine.get(4)).toEqual({ reason: expect.stringMatching(/^BAD_USER_INPUT: timestamp_begin:/), record: lines[3] });
    expect(byLine.get(5)).toEqual({ reason: 'NOT_FOUND: nobody', record: lines[4] });
    expect(byLine.get(7)).toEqual({ reason: expect.stringMatching(/^BAD_USER_INPUT: Invalid Closing Quote/), record: lines[5] });
    expect(byLine.get(9)).toEqual({ reason: expect.stringMatching(/^BAD_USER_INPUT: Quote Not Closed/), record: lines[7] });

    // The operator corrects the records in place and imports the reject file itself.
    const fixes: Record<number, string> = {
      3: call('r2', 'a0', 11),
      4: call('r3', 'a1', 12),
      5: call('r4', 'a1', 13),
      7: call('r5', 'a1', 14),
      9: call('r7', 'a2', 16),
    };
    const corrected = [
      'line,reason,record',
      ...rows.slice(1).map(([line, reason, record]) => [line, cell(reason), cell(fixes[Number(line)] ?? record)].join(',')),
    ];
    const fixedFile = tempFile('cdrs.rejects.csv', corrected.join('\n') + '\n');
    const before = await balances(ctx);
    const second = await importFile(ctx, [fixedFile, '--no-progress']);
    expect(second.code).toBe(0);
    expect(summaryOf(second.output)).toMatchObject({ lines: '5', accepted: '5', rated: '5', charged: String(11 + 12 + 13 + 14 + 16) });
    const after = await balances(ctx);
    expect(before.get('a0')! - after.get('a0')!).toBe(11n);
    expect(before.get('a1')! - after.get('a1')!).toBe(12n + 13n + 14n);
    expect(before.get('a2')! - after.get('a2')!).toBe(16n);
    // Each record keeps the line it had in the first file.
    const records = await ctx.mongo.collections.transactions.find({ transaction_tag: { $in: ['r2', 'r5'] } }).toArray();
    expect(records.map((r) => r.transaction_tag).sort()).toEqual(['r2', 'r5']);
  });

  it('a reject file imported again unchanged rejects the same records under their first lines', async () => {
    const file = tempFile(
      'again.csv',
      ['transaction_tag,account_tag,source,destination,timestamp_begin,timestamp_end', call('s"1', 'a0', 5)].join('\n') + '\n',
    );
    expect((await importFile(ctx, [file, '--no-progress'])).code).toBe(1);
    const rejects = `${file}.rejects.csv`;
    const copy = tempFile('again.rejects.csv', readFileSync(rejects, 'utf8'));
    const rerun = await importFile(ctx, [copy, '--no-progress']);
    expect(rerun.code).toBe(1);
    expect(await rejectsOf(`${copy}.rejects.csv`)).toEqual(await rejectsOf(rejects));
  });
});
