import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import {
  builtinMapping,
  CdrFormat,
  feedRecords,
  HeaderError,
  MappingError,
  parseMapping,
  Totals,
  type BuiltinFormat,
} from '../../../src/shared/domain/imports';
import type { BatchSubmitter } from '../../../src/shared/domain/imports';
import { BUILTIN_FORMATS } from '../../../src/shared/domain/imports/cdr/builtin';
import type { ImportLine } from '../../../src/shared/domain/queues/payloads';

/**
 * The switch formats (docs/IMPORTS.md, "Switch formats") read from the sample files in examples/cdrs:
 * which rows are calls, with which parties and times, which are skipped, which are rejected and why.
 * No servers: the batches are caught as the CLI would send them (test/integration/import/cdr-formats.test.ts
 * imports the same files into real workers).
 */
const examples = path.resolve(__dirname, '..', '..', '..', 'examples', 'cdrs');

interface Read {
  totals: Totals;
  calls: ImportLine[];
  rejects: { line: number; reason: string; raw: string }[];
  header: { line: number; raw: string } | null;
  batches: number[];
}

async function readCdrs(format: CdrFormat, text: string | Buffer, batchSize = 1000): Promise<Read> {
  const out: Read = { totals: new Totals(), calls: [], rejects: [], header: null, batches: [] };
  const submitter = {
    submit: async (_id: string, batch: number, lines: ImportLine[]) => {
      out.batches.push(batch);
      out.calls.push(...lines);
    },
  } as unknown as BatchSubmitter;
  await feedRecords(Readable.from([Buffer.from(text)]), {
    importId: 'test',
    format: 'csv',
    cdr: format,
    batchSize,
    submitter,
    totals: out.totals,
    onInvalid: async (line, reason, raw) => void out.rejects.push({ line, reason, raw }),
    onHeader: (line, raw) => (out.header = { line, raw }),
  });
  return out;
}

const sample = (file: string) => readFileSync(path.join(examples, file));
const named = (name: BuiltinFormat, zone: string | null = null) => new CdrFormat(builtinMapping(name), zone);
const times = (c: ImportLine) => [c.timestamp_auth, c.timestamp_begin, c.timestamp_end];
const counts = (t: Totals) => ({
  lines: t.lines,
  accepted: t.accepted,
  invalid: t.invalid,
  unanswered: t.unanswered,
  otherRows: t.otherRows,
  paired: t.paired,
});

describe('asterisk (cdr_csv Master.csv)', () => {
  it('reads answered calls in local time across both changes of the clocks, skips unanswered ones, keeps a truncated last line whole', async () => {
    const text = sample('asterisk/Master.csv');
    const { totals, calls, rejects } = await readCdrs(named('asterisk', 'Europe/Berlin'), text);
    expect(counts(totals)).toEqual({ lines: 8, accepted: 4, invalid: 1, unanswered: 3, otherRows: 0, paired: 0 });
    expect(calls.map((c) => [c.line, c.transaction_tag, c.account_tag, c.source, c.destination, ...times(c)])).toEqual([
      [1, '1774717331.1', 'alice', '100', '4930111001', '2026-03-28T17:02:11.000Z', '2026-03-28T17:02:15.000Z', '2026-03-28T17:04:02.000Z'],
      // 01:58:30 CET to 03:01:30 CEST: 180 s, as billsec says (not 3780).
      [4, '1774745880.14', 'bob', '200', '4930222004', '2026-03-29T00:58:00.000Z', '2026-03-29T00:58:30.000Z', '2026-03-29T01:01:30.000Z'],
      // Answered at the first 02:40:20 (CEST), ended at the second 02:05:20 (CET): 1500 s.
      [
        5,
        '1792888800.21',
        'alice',
        '100',
        '4930111005',
        '2026-10-25T00:40:00.000Z',
        '2026-10-25T00:40:20.000Z',
        '2026-10-25T01:05:20.000Z',
      ],
      // Wholly in the repeated hour: either reading is 120 s; the earlier is kept.
      [6, '1792890600.25', 'bob', '200', '4930222006', '2026-10-25T00:10:00.000Z', '2026-10-25T00:10:04.000Z', '2026-10-25T00:12:04.000Z'],
    ]);
    const lastLine = text.toString('utf8').split('\n')[7];
    expect(rejects).toEqual([{ line: 8, reason: expect.stringMatching(/^BAD_USER_INPUT: Quote Not Closed/), raw: lastLine }]);
  });

  it('skips the header row again where files with one are concatenated, not counting it as a line', async () => {
    const header =
      'accountcode,src,dst,dcontext,clid,channel,dstchannel,lastapp,lastdata,start,answer,end,duration,billsec,disposition,amaflags,uniqueid,userfield';
    // The sample without its last line, which it leaves truncated on purpose.
    const content = sample('asterisk/Master.csv').toString().split('\n').slice(0, -1).join('\n');
    const file = `${header}\n${content}\n`;
    const once = await readCdrs(named('asterisk', 'Europe/Berlin'), file);
    const twice = await readCdrs(named('asterisk', 'Europe/Berlin'), file + file);
    expect(counts(twice.totals)).toEqual({
      ...counts(once.totals),
      lines: 2 * once.totals.lines,
      accepted: 2 * once.totals.accepted,
      invalid: 2 * once.totals.invalid,
      unanswered: 2 * once.totals.unanswered,
      otherRows: 2 * once.totals.otherRows,
    });
    expect(twice.rejects).toEqual(once.rejects.concat(once.rejects.map((r) => ({ ...r, line: r.line + once.totals.lines + 1 }))));
    expect(twice.header).toEqual({ line: 1, raw: header });
  });

  it('recognises a header row, and reads the columns by its names', async () => {
    const header =
      'accountcode,src,dst,dcontext,clid,channel,dstchannel,lastapp,lastdata,start,answer,end,duration,billsec,disposition,amaflags,uniqueid,userfield';
    const {
      header: seen,
      calls,
      totals,
    } = await readCdrs(named('asterisk', 'Europe/Berlin'), `${header}\n${sample('asterisk/Master.csv')}`);
    expect(seen).toEqual({ line: 1, raw: header });
    expect(totals.lines).toBe(8);
    expect(calls.map((c) => c.line)).toEqual([2, 5, 6, 7]);
    // Reordered columns under a header are read by name.
    const reordered =
      'uniqueid,accountcode,src,dst,start,answer,end,billsec,disposition\n1.1,alice,100,4930111001,2026-01-15 10:00:00,2026-01-15 10:00:05,2026-01-15 10:01:05,60,ANSWERED\n';
    expect((await readCdrs(named('asterisk', 'UTC'), reordered)).calls.map(times)).toEqual([
      ['2026-01-15T10:00:00.000Z', '2026-01-15T10:00:05.000Z', '2026-01-15T10:01:05.000Z'],
    ]);
  });

  it('rejects a local time the clocks skipped, naming the column', async () => {
    const row =
      '"bob","200","4930222004","from-internal","Bob <200>","PJSIP/200-1","PJSIP/c-2","Dial","x","2026-03-29 02:10:00","2026-03-29 02:10:30","2026-03-29 02:11:30",90,60,"ANSWERED","DOCUMENTATION","1.1",""';
    const { rejects, calls } = await readCdrs(named('asterisk', 'Europe/Berlin'), row);
    expect(calls).toEqual([]);
    expect(rejects.map((r) => r.reason)).toEqual([
      'BAD_USER_INPUT: timestamp_begin (column answer): 2026-03-29 02:10:30 does not exist in Europe/Berlin (the clocks skipped it)',
    ]);
  });

  it('names the column a field came from when validation refuses it', async () => {
    const row =
      '"","200","4930222004","from-internal","Bob","PJSIP/200-1","PJSIP/c-2","Dial","x","2026-01-15 10:00:00","2026-01-15 10:00:05","2026-01-15 10:01:05",65,60,"ANSWERED","DOCUMENTATION","1.1",""';
    expect((await readCdrs(named('asterisk', 'UTC'), row)).rejects.map((r) => r.reason)).toEqual([
      'BAD_USER_INPUT: account_tag (column accountcode): is required',
    ]);
  });

  it('rejects a row of 17 or 20 cells whose 17th is not a uniqueid (loguniqueid=no, loguserfield=yes: the userfield)', async () => {
    const row = (dst: string, seventeenth: string, more = '', disposition = 'ANSWERED') =>
      `"alice","100","${dst}","from-internal","Alice <100>","PJSIP/100-1","PJSIP/c-2","Dial","x","2026-01-15 10:00:00","2026-01-15 10:00:05","2026-01-15 10:01:05",65,60,"${disposition}","DOCUMENTATION","${seventeenth}"${more}`;
    const file = [
      row('4930111001', 'vip'),
      row('4930111002', 'vip'),
      row('4930111003', 'vip', ',"","1768471200.3","1"'),
      row('4930111004', 'vip', '', 'NO ANSWER'),
      row('4930111005', '1768471200.5'),
      row('4930111006', 'pbx-berlin-1768471200.6'),
      // 18 cells: the 17th is the uniqueid whatever it holds (an id given to the channel by ARI, say).
      row('4930111007', 'my-own-id', ',"vip"'),
    ];
    const { totals, calls, rejects } = await readCdrs(named('asterisk', 'UTC'), file.join('\n') + '\n');
    expect(counts(totals)).toEqual({ lines: 7, accepted: 3, invalid: 3, unanswered: 1, otherRows: 0, paired: 0 });
    expect(calls.map((c) => [c.line, c.transaction_tag])).toEqual([
      [5, '1768471200.5'],
      [6, 'pbx-berlin-1768471200.6'],
      [7, 'my-own-id'],
    ]);
    expect(rejects.map((r) => r.line)).toEqual([1, 2, 3]);
    for (const { reason } of rejects)
      expect(reason).toBe(
        'BAD_USER_INPUT: transaction_tag (column uniqueid): not an Asterisk uniqueid (epoch.sequence, or systemname-epoch.sequence): with loguniqueid=no and loguserfield=yes this column is the userfield; describe that cdr.conf layout with --map',
      );
  });

  it('stops before anything is sent when the file is not in the format (no uniqueid column)', async () => {
    const row16 =
      '"alice","100","4930111001","from-internal","Alice","PJSIP/100-1","PJSIP/c-2","Dial","x","2026-01-15 10:00:00","2026-01-15 10:00:05","2026-01-15 10:01:05",65,60,"ANSWERED","DOCUMENTATION"';
    const read = readCdrs(named('asterisk', 'UTC'), `${row16}\n${row16}\n`);
    await expect(read).rejects.toThrow(HeaderError);
    await expect(read).rejects.toThrow(/asterisk: line 1 has 16 cells, where asterisk rows have 17 or 18 or 20 or 21 .*loguniqueid=yes/);
  });

  it('needs the switch time zone, and a real one', () => {
    expect(() => named('asterisk')).toThrow(MappingError);
    expect(() => named('asterisk')).toThrow(/--time-zone/);
    expect(() => named('asterisk', 'Mars/Olympus')).toThrow(/not a time zone name/);
  });
});

describe('freeswitch (mod_cdr_csv)', () => {
  it('reads the example template: quoted cells, an empty answer_stamp skipped, New York times across both changes', async () => {
    const { totals, calls, rejects } = await readCdrs(named('freeswitch', 'America/New_York'), sample('freeswitch/Master.csv'));
    expect(counts(totals)).toEqual({ lines: 6, accepted: 3, invalid: 1, unanswered: 2, otherRows: 0, paired: 0 });
    expect(calls.map((c) => [c.line, c.transaction_tag.slice(-2), c.account_tag, c.source, c.timestamp_begin, c.timestamp_end])).toEqual([
      [1, '01', 'alice', '+12125550100', '2026-03-08T02:15:04.000Z', '2026-03-08T02:17:04.000Z'],
      [3, '03', 'bob', '+12125550200', '2026-03-08T06:59:10.000Z', '2026-03-08T07:00:10.000Z'],
      [4, '04', 'bob', '+12125550200', '2026-11-01T05:50:30.000Z', '2026-11-01T06:05:30.000Z'],
    ]);
    expect(rejects.map((r) => [r.line, r.reason.slice(0, 33)])).toEqual([[6, 'BAD_USER_INPUT: Quote Not Closed:']]);
  });

  it('reads a template an operator changed, described by a mapping file, under its header row', async () => {
    const mapping = parseMapping(JSON.parse(sample('freeswitch/billing.map.json').toString()));
    const { totals, calls, rejects, header } = await readCdrs(new CdrFormat(mapping), sample('freeswitch/billing.csv'));
    expect(header?.line).toBe(1);
    expect(counts(totals)).toEqual({ lines: 4, accepted: 2, invalid: 1, unanswered: 1, otherRows: 0, paired: 0 });
    expect(calls.map((c) => [c.line, c.account_tag, c.source, ...times(c)])).toEqual([
      // London: 00:59:30 GMT to 02:00:45 BST, billed 75.25 s.
      [2, 'alice', '1001', '2026-03-29T00:59:00.000Z', '2026-03-29T00:59:30.000Z', '2026-03-29T01:00:45.250Z'],
      [4, 'bob', '1002', '2026-10-25T00:20:00.000Z', '2026-10-25T00:20:05.000Z', '2026-10-25T01:10:05.000Z'],
    ]);
    expect(rejects.map((r) => r.line)).toEqual([5]);
  });

  it("reads mod_cdr_csv's default template, a space before its last quoted cell, with a mapping file", async () => {
    // The `example` template without its codecs, as an operator would copy the format into a mapping file.
    const example = BUILTIN_FORMATS.freeswitch;
    const mapping = parseMapping({
      ...example,
      name: 'fs-default',
      columns: example.columns.slice(0, 13),
      time: { format: 'datetime', zone: 'UTC' },
    });
    // The template ends `"${bleg_uuid}", "${accountcode}"`.
    const row =
      '"Alice","1001","4930111001","default","2026-01-10 10:00:00","2026-01-10 10:00:05","2026-01-10 10:01:05","65","60","NORMAL_CLEARING","u-1","b-1", "alice"';
    const { calls, rejects } = await readCdrs(new CdrFormat(mapping), `${row}\n`);
    expect(rejects).toEqual([]);
    expect(calls.map((c) => [c.transaction_tag, c.account_tag, c.timestamp_begin, c.timestamp_end])).toEqual([
      ['u-1', 'alice', '2026-01-10T10:00:05.000Z', '2026-01-10T10:01:05.000Z'],
    ]);
  });
});

describe('kamailio-acc (acc table: INVITE and BYE rows)', () => {
  it('pairs INVITE and BYE rows across the file (a BYE from either side), reports the unpaired ones, skips failed INVITEs', async () => {
    const { totals, calls, rejects } = await readCdrs(named('kamailio-acc'), sample('kamailio/acc_1.log'));
    expect(counts(totals)).toEqual({ lines: 8, accepted: 2, invalid: 3, unanswered: 1, otherRows: 0, paired: 2 });
    expect(
      calls.map((c) => [c.line, c.transaction_tag, c.account_tag, c.destination, c.source_ip, c.timestamp_begin, c.timestamp_end]),
    ).toEqual([
      [1, 'c1@pbx.example', 'alice', '4930111001', '192.0.2.10', '2026-01-15T10:00:00.000Z', '2026-01-15T10:01:02.000Z'],
      [2, 'c2@pbx.example', 'bob', '4930222002', '192.0.2.11', '2026-01-15T10:00:05.000Z', '2026-01-15T10:02:05.000Z'],
    ]);
    expect(rejects.map((r) => [r.line, r.reason])).toEqual([
      [8, "BAD_USER_INPUT: truncated: the file ends before this row's line end (cut while being written); not rated"],
      [6, 'BAD_USER_INPUT: a BYE row without its INVITE row (Call-ID c9@pbx.example): not rated'],
      [7, 'BAD_USER_INPUT: an INVITE row without its BYE row (Call-ID c4@pbx.example): not rated'],
    ]);
  });

  it('sends a paired call in the batch of the row that completes it, with both rows as its text', async () => {
    const { batches, calls } = await readCdrs(named('kamailio-acc'), sample('kamailio/acc_1.log'), 2);
    // c1 completes on row 3 (position 2: batch 1), c2 on row 5 (position 4: batch 2).
    expect(batches).toEqual([1, 2]);
    expect(calls.map((c) => c.line)).toEqual([1, 2]);
  });

  it('pairs a BYE that comes before its INVITE (files of several processes concatenated)', async () => {
    const rows = sample('kamailio/acc_1.log').toString().split('\n');
    const { calls, rejects } = await readCdrs(named('kamailio-acc'), [rows[2], rows[0]].join('\n') + '\n');
    expect(calls.map((c) => [c.line, c.transaction_tag, c.timestamp_begin, c.timestamp_end])).toEqual([
      [2, 'c1@pbx.example', '2026-01-15T10:00:00.000Z', '2026-01-15T10:01:02.000Z'],
    ]);
    expect(rejects).toEqual([]);
  });

  it('reads a db_text table: its column definitions as the header, escaped colons', async () => {
    const { totals, calls, header } = await readCdrs(named('kamailio-acc'), sample('kamailio/acc'));
    expect(header?.raw).toMatch(/^id\(int,auto\) method\(string\)/);
    expect(counts(totals)).toEqual({ lines: 5, accepted: 2, invalid: 0, unanswered: 1, otherRows: 0, paired: 2 });
    expect(calls.map((c) => [c.transaction_tag, c.account_tag, c.timestamp_begin, c.timestamp_end])).toEqual([
      ['c1@192.0.2.10:5060', 'alice', '2026-01-15T10:00:00.000Z', '2026-01-15T10:01:02.000Z'],
      ['c2@192.0.2.11:5060', 'bob', '2026-01-15T10:00:05.000Z', '2026-01-15T10:02:05.000Z'],
    ]);
  });

  it("imports a db_text file's reject file again, reading its records with the table's ':' separator", async () => {
    const [definition, ...records] = sample('kamailio/acc').toString().trim().split('\n');
    // The first call's BYE row (record 4) missing: its INVITE row is rejected; the operator adds the BYE to the reject file.
    const first = await readCdrs(named('kamailio-acc'), [definition, ...records.filter((r) => !r.startsWith('4:'))].join('\n') + '\n');
    expect(first.rejects.map((r) => r.line)).toEqual([2]);
    const cell = (text: string) => `"${text.replace(/"/g, '""')}"`;
    const rejectFile = [
      'line,reason,record',
      `1,${cell('header row, kept so that this file can be imported again')},${cell(definition)}`,
      `2,${cell(first.rejects[0].reason)},${cell(first.rejects[0].raw)}`,
      `5,${cell('added by hand')},${cell(records.find((r) => r.startsWith('4:'))!)}`,
    ].join('\n');
    const again = await readCdrs(named('kamailio-acc'), rejectFile + '\n');
    expect(again.rejects).toEqual([]);
    expect(again.calls.map((c) => [c.line, c.transaction_tag, c.timestamp_begin, c.timestamp_end])).toEqual([
      [2, 'c1@192.0.2.10:5060', '2026-01-15T10:00:00.000Z', '2026-01-15T10:01:02.000Z'],
    ]);
  });

  it('reads db_text files concatenated: a repeated definition line is skipped, another one is rejected', async () => {
    const table = sample('kamailio/acc').toString();
    const second = table.replace(/c(\d)@/g, 'd$1@');
    const { totals, calls, rejects, header } = await readCdrs(named('kamailio-acc'), table + second);
    expect(rejects).toEqual([]);
    expect(header?.line).toBe(1);
    expect(counts(totals)).toEqual({ lines: 10, accepted: 4, invalid: 0, unanswered: 2, otherRows: 0, paired: 4 });
    expect(calls.map((c) => [c.line, c.transaction_tag])).toEqual([
      [2, 'c1@192.0.2.10:5060'],
      [3, 'c2@192.0.2.11:5060'],
      [8, 'd1@192.0.2.10:5060'],
      [9, 'd2@192.0.2.11:5060'],
    ]);
    // Another table's definition (a column more): not a row, and not this file's columns either.
    const other = second.replace('dst_domain(string)', 'dst_domain(string) cause(string)');
    const mixed = await readCdrs(named('kamailio-acc'), table + other);
    expect(mixed.rejects.map((r) => [r.line, r.reason])).toEqual([
      [7, expect.stringMatching(/^BAD_USER_INPUT: a db_text column definition line unlike the file's first/)],
    ]);
    expect(mixed.calls).toHaveLength(4);
  });

  it('counts a second INVITE of a call in progress (a re-INVITE) and rows of other methods as other rows', async () => {
    const rows = sample('kamailio/acc_1.log').toString().split('\n');
    const reinvite = rows[0].replace('|1768471200|', '|1768471230|');
    const message = rows[0].replace('INVITE|', 'MESSAGE|');
    const { totals, calls } = await readCdrs(named('kamailio-acc'), [rows[0], reinvite, message, rows[2]].join('\n') + '\n');
    expect(counts(totals)).toEqual({ lines: 4, accepted: 1, invalid: 0, unanswered: 0, otherRows: 2, paired: 1 });
    expect(calls[0].timestamp_begin).toBe('2026-01-15T10:00:00.000Z');
  });
  it('counts a re-INVITE from the callee (the tags the other way round) as another row', async () => {
    const rows = sample('kamailio/acc_1.log').toString().split('\n');
    // The callee refreshes the session of c1 (rows[0]): From tag b1t, To tag a1f.
    const reinvite = 'INVITE|b1t|a1f|c1@pbx.example|200|OK|1768471230|4930111001|carrier.example|198.51.100.7|alice|alice|pbx.example';
    const { totals, calls, rejects } = await readCdrs(named('kamailio-acc'), [rows[0], reinvite, rows[2]].join('\n') + '\n');
    expect(rejects).toEqual([]);
    expect(counts(totals)).toEqual({ lines: 3, accepted: 1, invalid: 0, unanswered: 0, otherRows: 1, paired: 1 });
    expect(calls.map((c) => [c.line, c.account_tag, c.timestamp_begin, c.timestamp_end])).toEqual([
      [1, 'alice', '2026-01-15T10:00:00.000Z', '2026-01-15T10:01:02.000Z'],
    ]);
  });

  it('ends a call only with a BYE of its own dialog: the BYE of another fork of the Call-ID (another To tag) is not its end', async () => {
    const rows = sample('kamailio/acc_1.log').toString().split('\n');
    // c1 (rows[0], tags a1f/b1t) was forked; a second fork answered too (To tag b2x) and the caller hung it up at once.
    const fork = (from: string, to: string, time: number) =>
      `BYE|${from}|${to}|c1@pbx.example|200|OK|${time}|alice|pbx.example|192.0.2.10|4930111001|4930111001|pbx.example`;
    for (const other of [fork('a1f', 'b2x', 1768471201), fork('b2x', 'a1f', 1768471201)]) {
      const { calls, rejects } = await readCdrs(named('kamailio-acc'), [rows[0], other, rows[2]].join('\n') + '\n');
      expect(calls.map((c) => [c.timestamp_begin, c.timestamp_end])).toEqual([['2026-01-15T10:00:00.000Z', '2026-01-15T10:01:02.000Z']]);
      expect(rejects.map((r) => [r.line, r.reason])).toEqual([
        [2, 'BAD_USER_INPUT: a BYE row without its INVITE row (Call-ID c1@pbx.example): not rated'],
      ]);
    }
  });

  it('ends a call only with a 2xx BYE: a failed BYE (481 after crossing BYEs, 408 timed out) is another row', async () => {
    const rows = sample('kamailio/acc_1.log').toString().split('\n');
    const bye = (code: string, reason: string, time: number) =>
      `BYE|a1f|b1t|c1@pbx.example|${code}|${reason}|${time}|alice|pbx.example|192.0.2.10|4930111001|4930111001|pbx.example`;
    const read = (...lines: string[]) => readCdrs(named('kamailio-acc'), lines.join('\n') + '\n');
    // The caller's BYE timed out 30 s after the callee's BYE (rows[2]) ended the call; logged first or last.
    for (const file of [
      [rows[0], bye('408', 'Request Timeout', 1768471292), rows[2]],
      [rows[0], rows[2], bye('481', 'Call/Transaction Does Not Exist', 1768471262)],
    ]) {
      const { totals, calls, rejects } = await read(...file);
      expect(rejects).toEqual([]);
      expect(counts(totals)).toEqual({ lines: 3, accepted: 1, invalid: 0, unanswered: 0, otherRows: 1, paired: 1 });
      expect(calls.map((c) => [c.timestamp_begin, c.timestamp_end])).toEqual([['2026-01-15T10:00:00.000Z', '2026-01-15T10:01:02.000Z']]);
    }
    // Alone, a failed BYE is no call's end; a call whose only BYE failed waits for one, and is reported, never billed too long.
    expect(counts((await read(bye('481', 'Call/Transaction Does Not Exist', 1768471262))).totals)).toMatchObject({
      invalid: 0,
      otherRows: 1,
    });
    expect((await read(rows[0], bye('408', 'Request Timeout', 1768471292))).rejects.map((r) => [r.line, r.reason])).toEqual([
      [1, 'BAD_USER_INPUT: an INVITE row without its BYE row (Call-ID c1@pbx.example): not rated'],
    ]);
  });

  it('reads milliseconds with examples/kamailio/acc-time-attr.map.json (time_mode 2), rows as Kamailio 5.6 wrote them in the SIP lab', async () => {
    const map = readFileSync(path.join(examples, '..', 'kamailio', 'acc-time-attr.map.json'), 'utf8');
    // The BYE's process wrote its file first; the files were concatenated in name order.
    const rows = [
      'BYE|27156SIPpTag001|27145SIPpTag011|1-27156@127.0.0.1|200|OK|1795719379|1795719379.080097|alice|127.0.0.1|127.0.0.1|39061234567||127.0.0.1',
      'INVITE|27156SIPpTag001|27145SIPpTag011|1-27156@127.0.0.1|200|OK|1795719376|1795719376.771977|alice|127.0.0.1|127.0.0.1|39061234567|39061234567|127.0.0.1',
    ];
    const { calls, rejects } = await readCdrs(new CdrFormat(parseMapping(JSON.parse(map))), rows.join('\n') + '\n');
    expect(rejects).toEqual([]);
    expect(calls.map((c) => [c.line, c.transaction_tag, c.account_tag, c.destination, c.timestamp_begin, c.timestamp_end])).toEqual([
      [2, '1-27156@127.0.0.1', 'alice', '39061234567', '2026-11-26T18:56:16.772Z', '2026-11-26T18:56:19.080Z'],
    ]);
  });
});

describe('kamailio-cdrs (acc_cdrs: one row per dialog)', () => {
  it('reads the start and the exact duration, skips failed dialogs (duration 0)', async () => {
    const { totals, calls, rejects } = await readCdrs(named('kamailio-cdrs'), sample('kamailio/acc_cdrs_1.log'));
    expect(counts(totals)).toEqual({ lines: 4, accepted: 2, invalid: 1, unanswered: 1, otherRows: 0, paired: 0 });
    expect(calls.map((c) => [c.transaction_tag, c.account_tag, c.timestamp_begin, c.timestamp_end])).toEqual([
      ['c1@pbx.example', 'alice', '2026-01-15T10:00:00.000Z', '2026-01-15T10:01:02.480Z'],
      ['c2@pbx.example', 'bob', '2026-01-15T10:00:05.000Z', '2026-01-15T10:02:05.000Z'],
    ]);
    expect(rejects.map((r) => [r.line, r.raw])).toEqual([[4, '1768471400|17684']]);
  });
});

describe('opensips-acc (acc table version 7)', () => {
  it('reads CDR rows whole (ms_duration), pairs per-transaction rows, skips failed calls', async () => {
    const { totals, calls, rejects } = await readCdrs(named('opensips-acc'), sample('opensips/acc_1.log'));
    expect(counts(totals)).toEqual({ lines: 6, accepted: 3, invalid: 1, unanswered: 1, otherRows: 0, paired: 1 });
    expect(calls.map((c) => [c.line, c.transaction_tag, c.account_tag, ...times(c)])).toEqual([
      [1, 'o1@sbc.example', 'alice', '2026-01-15T10:00:00.000Z', '2026-01-15T10:00:04.000Z', '2026-01-15T10:01:06.480Z'],
      [3, 'o3@sbc.example', 'bob', null, '2026-01-15T10:01:40.000Z', '2026-01-15T10:02:25.000Z'],
      [5, 'o4@sbc.example', 'alice', '2026-01-15T10:04:58.000Z', '2026-01-15T10:05:00.000Z', '2026-01-15T10:05:30.001Z'],
    ]);
    // The last line, cut inside its last cell, still has a layout's 11 cells: its missing line end tells.
    expect(rejects.map((r) => [r.line, r.reason])).toEqual([
      [6, "BAD_USER_INPUT: truncated: the file ends before this row's line end (cut while being written); not rated"],
    ]);
    // A row cut short further up (a crash, then the switch wrote on) has too few cells.
    const first = sample('opensips/acc_1.log').toString().split('\n')[0];
    const cut = await readCdrs(named('opensips-acc'), `${first}\nINVITE|f9|t9|o9@sbc\n`);
    expect(cut.rejects.map((r) => r.reason)).toContain('BAD_USER_INPUT: expected 9 or 11 or 13 cells but got 4');
  });
});

describe('a last row without its line end (a file copied while the switch was writing it)', () => {
  const TRUNCATED = "BAD_USER_INPUT: truncated: the file ends before this row's line end (cut while being written); not rated";

  it('is rejected in a db_flatstore file, which ends every row with one, even when its cells look whole', async () => {
    const first = 'INVITE|f1|t1|o1@sbc|200|OK|1768471204|alice|4930111001|4|1768471200|62|62480';
    // Cut inside ms_duration (1800 s: 1800000 ms): read as it stands, a call of 18 ms.
    const cut = 'INVITE|f4|t4|o4@sbc|200|OK|1768471500|alice|4930111004|2|1768471498|1800|18';
    const { totals, calls, rejects } = await readCdrs(named('opensips-acc'), `${first}\n${cut}`);
    expect(calls.map((c) => c.transaction_tag)).toEqual(['o1@sbc']);
    expect(rejects).toEqual([{ line: 2, reason: TRUNCATED, raw: cut }]);
    expect(counts(totals)).toMatchObject({ lines: 2, accepted: 1, invalid: 1 });
    const cdrs = await readCdrs(named('kamailio-cdrs'), '1768471205|1768471325|120.000000|c2@pbx|bob|4930');
    expect(cdrs.rejects.map((r) => [r.line, r.reason])).toEqual([[1, TRUNCATED]]);
    // With its line end (LF or CRLF; empty lines after it change nothing) the row is whole.
    for (const end of ['\n', '\r\n', '\n\n'])
      expect((await readCdrs(named('opensips-acc'), `${first}\n${cut}00000${end}`)).calls.map((c) => c.timestamp_end)).toEqual([
        '2026-01-15T10:01:06.480Z',
        '2026-01-15T10:35:00.000Z',
      ]);
  });

  it('is rejected in a CSV file when its last cell is not quoted; a quoted last cell closed by its quote is whole', async () => {
    const row = (uid: string, more: string) =>
      `"alice","100","4930111001","from-internal","Alice <100>","PJSIP/100-1","PJSIP/c-2","Dial","x","2026-01-15 10:00:00","2026-01-15 10:00:05","2026-01-15 10:01:05",65,60,"ANSWERED","DOCUMENTATION","${uid}"${more}`;
    // newcdrcolumns: the last cell, sequence, is a bare integer; cut, it still makes 21 cells.
    const first = row('1768471200.1', ',"","","1768471200.1","11"');
    const cut = row('1768471200.2', ',"","","1768471200.2",1');
    const { calls, rejects } = await readCdrs(named('asterisk', 'UTC'), `${first}\n${cut}`);
    expect(calls.map((c) => c.transaction_tag)).toEqual(['1768471200.1']);
    expect(rejects).toEqual([{ line: 2, reason: TRUNCATED, raw: cut }]);
    const quoted = await readCdrs(named('asterisk', 'UTC'), `${first}\n${row('1768471200.2', ',""')}`);
    expect(quoted.rejects).toEqual([]);
    expect(quoted.calls.map((c) => c.transaction_tag)).toEqual(['1768471200.1', '1768471200.2']);
  });

  it('is read whole from a reject file, where each record is a cell', async () => {
    const completed = 'INVITE|f4|t4|o4@sbc|200|OK|1768471500|alice|4930111004|2|1768471498|1800|1800000';
    const rejects = `line,reason,record\n2,"${TRUNCATED}",${completed}\n`;
    const { calls, rejects: again } = await readCdrs(named('opensips-acc'), rejects);
    expect(again).toEqual([]);
    expect(calls.map((c) => [c.line, c.timestamp_end])).toEqual([[2, '2026-01-15T10:35:00.000Z']]);
  });
});

describe('mapping files', () => {
  const base = {
    columns: ['id', 'who', 'from', 'to', 'answered_at', 'seconds'],
    fields: { transaction_tag: 'id', account_tag: 'who', source: 'from', destination: 'to', answer: 'answered_at', billsec: 'seconds' },
    time: { format: 'epoch' },
  };

  it('are checked whole before anything is read, naming the member at fault', () => {
    expect(() => parseMapping(base)).not.toThrow();
    const bad = (patch: object) => () => parseMapping({ ...base, ...patch });
    expect(bad({ colums: [] })).toThrow('colums: unknown member');
    expect(bad({ fields: { ...base.fields, account_tag: undefined } })).toThrow('fields.account_tag: is required');
    expect(bad({ fields: { ...base.fields, billsec: undefined } })).toThrow('fields: needs end, billsec or billmsec');
    expect(bad({ fields: { ...base.fields, answer: 'answer' } })).toThrow('columns: has no column "answer", which the mapping reads');
    expect(bad({ delimiter: ';;' })).toThrow('delimiter: must be one character');
    expect(bad({ columns: [['a'], ['b']] })).toThrow('columns[1]: two layouts have 1 columns');
    expect(bad({ time: { format: 'unix' } })).toThrow('time.format: must be one of datetime, iso, epoch, epoch_ms, epoch_us');
    expect(bad({ answered: { column: 'seconds', above: 0, equals: ['1'] } })).toThrow(
      'answered: needs exactly one of equals, prefix, notEmpty, above',
    );
    expect(bad({ pairs: { method: 'id' } })).toThrow('pairs.callid: is required');
    expect(bad({ columns: undefined })).toThrow('columns: is required unless header is "required"');
    // Columns are found by name whatever their case: two names that differ only in case are one column twice.
    expect(bad({ columns: [...base.columns, 'ID'] })).toThrow('columns: column "ID" appears twice');
    // An optional field naming a column no layout has would be read as absent: the call billed otherwise.
    expect(bad({ fields: { ...base.fields, billsec: undefined, billmsec: 'bill_msec' } })).toThrow(
      'fields.billmsec: names column "bill_msec", which no layout in columns has',
    );
    expect(bad({ fields: { ...base.fields, carrier_ip: 'carrier_addr' } })).toThrow('fields.carrier_ip: names column "carrier_addr"');
  });

  it("refuse a header row that lacks a column every one of the mapping's layouts has: the call would be billed from another column", async () => {
    const mapping = parseMapping(JSON.parse(sample('freeswitch/billing.map.json').toString()));
    const file = [
      'uuid,accountcode,sip_from_user,destination_number,start_stamp,answer_stamp,end_stamp,bill_msec,hangup_cause',
      '"u-1","alice","1001","4930111001","2026-01-10 10:00:00","2026-01-10 10:00:05","2026-01-10 10:10:05","1500","NORMAL_CLEARING"',
    ];
    await expect(readCdrs(new CdrFormat(mapping), file.join('\n') + '\n')).rejects.toThrow(/billmsec/);
  });

  it('reject a row whose answered test reads a number that is not one, naming the column, rather than skip it as unanswered', async () => {
    const format = new CdrFormat(parseMapping({ ...base, answered: { column: 'seconds', above: 0 } }));
    const rows = [
      '1.1,alice,100,4930111001,1768471200,1:05',
      '1.2,alice,100,4930111001,1768471200,65s',
      '1.3,alice,100,4930111001,1768471200,0',
    ];
    const { totals, rejects } = await readCdrs(format, rows.join('\n') + '\n');
    expect(counts(totals)).toMatchObject({ accepted: 0, invalid: 2, unanswered: 1 });
    expect(rejects.map((r) => [r.line, r.reason])).toEqual([
      [1, 'BAD_USER_INPUT: answered (column seconds): "1:05" is not a number'],
      [2, 'BAD_USER_INPUT: answered (column seconds): "65s" is not a number'],
    ]);
  });

  it("read a reject file's records as written: a tab-separated row beginning with an empty cell", async () => {
    const tsv = new CdrFormat(parseMapping({ ...base, delimiter: '\t', columns: ['note', ...base.columns] }));
    const row = ['', '1.1', 'alice', '100', '4930111001', '1768471200', '60'].join('\t');
    // The reject file writes such a record unquoted: its leading tab is the record's, not space to drop.
    const { calls, rejects } = await readCdrs(tsv, `line,reason,record\n3,BAD_USER_INPUT: x,${row}\n`);
    expect(rejects).toEqual([]);
    expect(calls.map((c) => [c.line, c.transaction_tag])).toEqual([[3, '1.1']]);
  });

  it('name their format in the import id with their content and time zone: another reading is another import', () => {
    const a = new CdrFormat(parseMapping(base));
    expect(new CdrFormat(parseMapping(base)).key).toBe(a.key);
    expect(new CdrFormat(parseMapping({ ...base, time: { format: 'epoch_ms' } })).key).not.toBe(a.key);
    const local = { ...base, time: { format: 'datetime' } };
    expect(new CdrFormat(parseMapping(local), 'Europe/Berlin').key).not.toBe(new CdrFormat(parseMapping(local), 'Europe/Paris').key);
  });

  it('docs/IMPORTS.md shows the example mapping file as it is', () => {
    const docs = readFileSync(path.join(examples, '..', '..', 'docs', 'IMPORTS.md'), 'utf8');
    const shown = /billing\.map\.json\):\n\n```json\n(.*?)\n```/s.exec(docs);
    expect(shown).not.toBeNull();
    expect(JSON.parse(shown![1])).toEqual(JSON.parse(sample('freeswitch/billing.map.json').toString()));
  });

  it('read every named format as a mapping file is read', () => {
    for (const name of ['asterisk', 'freeswitch', 'kamailio-acc', 'kamailio-cdrs', 'opensips-acc'] as const) {
      expect(builtinMapping(name).name).toBe(name);
    }
  });
});
