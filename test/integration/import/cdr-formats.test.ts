import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse';
import { auditLedger } from '../../../src/shared/domain/ledger/audit';
import { createTestContext, TestContext } from '../../support/harness';
import { startWorkerProcess, WorkerProcess } from '../../support/processes';
import { waitFor } from '../../support/agent-harness';
import { account, carrier, pricelist, rate, seed } from '../../support/seed';
import { balances, importFile, runCli, summaryOf, tempFile } from './support';

/**
 * The sample files of examples/cdrs, in each switch's own format, imported through the real CLI into a
 * real worker process (docs/IMPORTS.md, "Switch formats"): the fees, the skipped rows and the rejects
 * of each file are exact, importing a file again charges nothing, and the ledger audit agrees. Each
 * format gets its own database: the Kamailio samples share their Call-IDs, and would be one call twice.
 * A call of n seconds costs n (60 per minute, 1 s increments); alice and bob start at 1,000,000.
 */
const examples = path.resolve(__dirname, '..', '..', '..', 'examples', 'cdrs');

/** A copy of a sample in a directory of its own: the reject file is written beside it. */
const copyOf = (file: string) => {
  const copy = tempFile(path.basename(file), '');
  copyFileSync(path.join(examples, file), copy);
  return copy;
};

async function rejectRows(file: string): Promise<string[][]> {
  return new Promise((resolve, reject) =>
    parse(readFileSync(file), { record_delimiter: ['\r\n', '\n'] }, (err, rows: string[][]) => (err ? reject(err) : resolve(rows))),
  );
}

const cell = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);

interface Servers {
  ctx: TestContext;
  worker: WorkerProcess;
}

/** A database and queue prefix of its own, rated per second on 49, alice and bob, one worker process. */
function servers(): () => Servers {
  const s = {} as Servers;
  beforeAll(async () => {
    s.ctx = await createTestContext({ JOB_LOCK_MS: '2000' });
    await seed(s.ctx, {
      carriers: [carrier('c1', { host: '10.0.0.1', port: 5060 })],
      pricelists: [pricelist('pl')],
      rates: [rate('pl', 'c1', '49', { rate: 60, rate_increment: 1, connect_fee: 0 })],
      accounts: ['alice', 'bob', 'carol'].map((tag) => account(tag, { balance: 1_000_000n })),
    });
    s.worker = await startWorkerProcess(s.ctx.config);
  });
  afterAll(async () => {
    await s.worker?.stop();
    await s.ctx?.destroy();
  });
  return () => s;
}

/** Imports a sample, checks what it charged each account, then imports it again: nothing more. */
async function importTwice(
  ctx: TestContext,
  file: string,
  args: string[],
  expected: { summary: Record<string, string>; charged: Record<string, number>; code: number },
): Promise<void> {
  const before = await balances(ctx);
  const first = await importFile(ctx, [file, ...args, '--no-progress']);
  expect(summaryOf(first.output)).toMatchObject(expected.summary);
  expect(first.code).toBe(expected.code);
  const after = await balances(ctx);
  for (const [tag, fee] of Object.entries(expected.charged)) expect([tag, before.get(tag)! - after.get(tag)!]).toEqual([tag, BigInt(fee)]);
  const again = await importFile(ctx, [file, ...args, '--no-progress']);
  expect(summaryOf(again.output)).toMatchObject({ rated: '0', charged: '0', accepted: expected.summary.accepted });
  expect(await balances(ctx)).toEqual(after);
  expect((await auditLedger(ctx.mongo.collections)).differences).toEqual([]);
}

describe('rating import --format asterisk', () => {
  const s = servers();

  it('charges the answered calls of Master.csv in Berlin time, skips the unanswered, rejects the truncated last line whole', async () => {
    const file = copyOf('asterisk/Master.csv');
    await importTwice(s().ctx, file, ['--format', 'asterisk', '--time-zone', 'Europe/Berlin'], {
      code: 1,
      summary: {
        import: expect.stringContaining('asterisk, batch size 1000'),
        lines: '8',
        skipped: '3 (unanswered 3, other rows 0): not rated, not rejected',
        accepted: '4',
        rejected: `1 (invalid 1, refused 0) -> ${file}.rejects.csv`,
        rated: '4',
        charged: String(107 + 180 + 1500 + 120),
      },
      charged: { alice: 107 + 1500, bob: 180 + 120 },
    });
    const rows = await rejectRows(`${file}.rejects.csv`);
    const last = readFileSync(file, 'utf8').split('\n')[7];
    expect(rows).toEqual([
      ['line', 'reason', 'record'],
      ['8', expect.stringMatching(/^BAD_USER_INPUT: Quote Not Closed/), last],
    ]);
    const record = await s().ctx.mongo.collections.transactions.findOne({ transaction_tag: '1774745880.14' });
    expect(record).toMatchObject({ account_tag: 'bob', duration: 180, fee: 180n });
  });

  it('refuses, changing nothing, a file without the time zone or not in the format', async () => {
    const file = copyOf('asterisk/Master.csv');
    const noZone = await importFile(s().ctx, [file, '--format', 'asterisk', '--no-progress']);
    expect(noZone.code).toBe(2);
    expect(noZone.output).toMatch(/--time-zone/);
    const wrong = await importFile(s().ctx, [
      copyOf('freeswitch/Master.csv'),
      '--format',
      'asterisk',
      '--time-zone',
      'UTC',
      '--no-progress',
    ]);
    expect(wrong.code).toBe(2);
    expect(wrong.output).toMatch(/asterisk: line 1 has 15 cells/);
    expect(existsSync(`${file}.rejects.csv`)).toBe(false);
    expect(await s().ctx.mongo.collections.transactions.countDocuments({})).toBe(4);
  });
});

describe('rating import --format freeswitch, and --map for a changed template', () => {
  const s = servers();

  it('charges the example template in New York time', async () => {
    await importTwice(s().ctx, copyOf('freeswitch/Master.csv'), ['--format', 'freeswitch', '--time-zone', 'America/New_York'], {
      code: 1,
      summary: {
        lines: '6',
        skipped: '2 (unanswered 2, other rows 0): not rated, not rejected',
        accepted: '3',
        rated: '3',
        charged: '1080',
      },
      charged: { alice: 120, bob: 60 + 900 },
    });
  });

  it('charges an operator template described by a mapping file (header row, billmsec, London time)', async () => {
    const map = path.join(examples, 'freeswitch/billing.map.json');
    await importTwice(s().ctx, copyOf('freeswitch/billing.csv'), ['--map', map], {
      code: 1,
      summary: { import: expect.stringContaining('freeswitch-billing'), lines: '4', accepted: '2', rated: '2', charged: String(76 + 3000) },
      charged: { alice: 76, bob: 3000 },
    });
  });

  it('refuses a bad mapping file before reading anything', async () => {
    const map = tempFile('bad.json', JSON.stringify({ columns: ['a'], fields: { transaction_tag: 'a' } }));
    const bad = await importFile(s().ctx, [copyOf('freeswitch/billing.csv'), '--map', map, '--no-progress']);
    expect(bad.code).toBe(2);
    expect(bad.output).toMatch(/--map .*bad\.json: fields\.account_tag: is required/);
  });
});

describe('rating import --format kamailio-acc (db_flatstore and db_text)', () => {
  const s = servers();

  it('pairs INVITE and BYE rows into calls, reports the unpaired rows, and the corrected reject file charges them', async () => {
    const file = copyOf('kamailio/acc_1.log');
    await importTwice(s().ctx, file, ['--format', 'kamailio-acc'], {
      code: 1,
      summary: {
        lines: '8',
        skipped: '1 (unanswered 1, other rows 0): not rated, not rejected',
        paired: "2 (end rows joined to their begin row's call)",
        accepted: '2',
        rejected: `3 (invalid 3, refused 0) -> ${file}.rejects.csv`,
        charged: String(62 + 120),
      },
      charged: { alice: 62, bob: 120 },
    });
    const rows = await rejectRows(`${file}.rejects.csv`);
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(rows.slice(1).map(([line, , record]) => [line, record])).toEqual([
      ['8', lines[7]],
      ['6', lines[5]],
      ['7', lines[6]],
    ]);
    // The operator finds the missing rows (the other process's file, the next day's) and adds them.
    const fixes: Record<string, string> = {
      '8': 'BYE|a5f|b5t|c5@pbx.example|200|OK|1768471420|carol|pbx.example|192.0.2.12|4930111005|4930111005|pbx.example',
      '6': `INVITE|a9f|b9t|c9@pbx.example|200|OK|1768471300|bob|pbx.example|192.0.2.11|4930222009|4930222009|pbx.example\n${lines[5]}`,
      '7': `${lines[6]}\nBYE|b4t|a4f|c4@pbx.example|200|OK|1768471350|4930111004|carrier.example|198.51.100.7|alice|alice|pbx.example`,
    };
    const corrected = tempFile(
      'acc_1.log.rejects.csv',
      [
        'line,reason,record',
        ...rows.slice(1).map(([line, reason, record]) => [line, cell(reason), cell(fixes[line] ?? record)].join(',')),
      ].join('\n'),
    );
    const before = await balances(s().ctx);
    const again = await importFile(s().ctx, [corrected, '--format', 'kamailio-acc', '--no-progress']);
    // c5's BYE has no INVITE anywhere: still a reject, under its first line.
    expect(summaryOf(again.output)).toMatchObject({ lines: '5', paired: "2 (end rows joined to their begin row's call)", rated: '2' });
    expect(again.code).toBe(1);
    const after = await balances(s().ctx);
    expect(before.get('bob')! - after.get('bob')!).toBe(30n);
    expect(before.get('alice')! - after.get('alice')!).toBe(10n);
    expect((await rejectRows(`${corrected}.rejects.csv`)).slice(1).map(([line, reason]) => [line, reason])).toEqual([
      ['8', 'BAD_USER_INPUT: a BYE row without its INVITE row (Call-ID c5@pbx.example): not rated'],
    ]);
  });

  it('reads the db_text table the same calls were written to (other Call-IDs: charged on their own)', async () => {
    await importTwice(s().ctx, copyOf('kamailio/acc'), ['--format', 'kamailio-acc'], {
      code: 0,
      summary: { lines: '5', paired: "2 (end rows joined to their begin row's call)", accepted: '2', rated: '2', charged: '182' },
      charged: { alice: 62, bob: 120 },
    });
  });

  it('pairs across the whole file and cuts the same batches after a kill: a rerun charges each call exactly once', async () => {
    // 300 calls whose BYE comes 1 to 40 rows after their INVITE, so calls complete in other batches than they begin.
    const events: { key: number; row: string }[] = [];
    const expected = new Map<string, bigint>();
    for (let i = 0; i < 300; i++) {
      const who = ['alice', 'bob', 'carol'][i % 3];
      const begin = 1768471200 + i * 10;
      const seconds = 1 + ((i * 7) % 90);
      events.push({
        key: 2 * i,
        row: `INVITE|f${i}|t${i}|k${i}@pbx.example|200|OK|${begin}|${who}|pbx.example|192.0.2.10|4930${i}|4930${i}|pbx.example`,
      });
      events.push({
        key: 2 * i + 1 + 2 * (i % 40),
        row: `BYE|f${i}|t${i}|k${i}@pbx.example|200|OK|${begin + seconds}|${who}|pbx.example|192.0.2.10|x|x|pbx.example`,
      });
      expected.set(who, (expected.get(who) ?? 0n) + BigInt(seconds));
    }
    const rows = events.sort((x, y) => x.key - y.key).map((e) => e.row);
    expect(rows).toHaveLength(600);
    const file = tempFile('acc_2.log', rows.join('\n') + '\n');
    const { ctx } = s();
    const before = await balances(ctx);
    const first = runCli(ctx, [file, '--format', 'kamailio-acc', '--batch-size', '10', '--max-in-flight', '2', '--no-progress']);
    const batches = ctx.mongo.db.collection('import_batches');
    const done = async () => batches.countDocuments({ _id: { $regex: '^imp/f' } as never, result: { $exists: true } });
    await waitFor(async () => (await done()) >= 5, 'some batches to finish', 60000);
    first.child.kill('SIGKILL');
    await first.done;
    expect(await done()).toBeLessThan(60);
    const rerun = await importFile(ctx, [file, '--format', 'kamailio-acc', '--no-progress']);
    expect(rerun.code).toBe(0);
    expect(summaryOf(rerun.output)).toMatchObject({
      lines: '600',
      accepted: '300',
      paired: "300 (end rows joined to their begin row's call)",
    });
    const after = await balances(ctx);
    for (const who of ['alice', 'bob', 'carol']) expect([who, before.get(who)! - after.get(who)!]).toEqual([who, expected.get(who)]);
    expect((await auditLedger(ctx.mongo.collections)).differences).toEqual([]);
  });
});

describe('rating import --format kamailio-cdrs', () => {
  const s = servers();

  it('charges each dialog its exact duration, skips failed dialogs', async () => {
    await importTwice(s().ctx, copyOf('kamailio/acc_cdrs_1.log'), ['--format', 'kamailio-cdrs'], {
      code: 1,
      summary: {
        lines: '4',
        skipped: '1 (unanswered 1, other rows 0): not rated, not rejected',
        accepted: '2',
        rated: '2',
        charged: String(63 + 120),
      },
      charged: { alice: 63, bob: 120 },
    });
  });
});

describe('rating import --format opensips-acc', () => {
  const s = servers();

  it('charges CDR rows by ms_duration and paired per-transaction rows', async () => {
    await importTwice(s().ctx, copyOf('opensips/acc_1.log'), ['--format', 'opensips-acc'], {
      code: 1,
      summary: {
        lines: '6',
        paired: "1 (end rows joined to their begin row's call)",
        accepted: '3',
        rated: '3',
        charged: String(63 + 45 + 31),
      },
      charged: { alice: 63 + 31, bob: 45 },
    });
  });
});
