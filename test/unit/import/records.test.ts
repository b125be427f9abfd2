import { Readable } from 'node:stream';
import { readRecords, type SourceRecord } from '../../../src/shared/domain/imports/records';

/**
 * The CSV reader's line numbers and raw text: what a reject file names for a bad line, so an operator
 * can find it in the file. Empty lines, quoted cells spanning lines, CRLF and a last line without its
 * end must all keep the count right, including after a record the parser could not read.
 */
const HEADER = 'transaction_tag,account_tag,source,destination,timestamp_begin,timestamp_end';
/** A line's last four cells (any text: validation is not the reader's job). */
const REST = ',s,d,b,e';

type Read = Pick<SourceRecord, 'index' | 'line' | 'raw' | 'error'> & { tag?: string };

/** Reads HEADER + body, delivered in chunks of `chunkSize` bytes (default: all at once). */
async function read(body: string, chunkSize?: number, header = `${HEADER}\n`): Promise<Read[]> {
  const bytes = Buffer.from(header + body, 'utf8');
  const size = chunkSize ?? bytes.length;
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  const out: Read[] = [];
  for await (const r of readRecords(Readable.from(chunks), 'csv')) {
    if (r.header) continue;
    out.push({
      index: r.index,
      line: r.line,
      raw: r.raw,
      ...(r.error ? { error: r.error } : {}),
      ...(r.row ? { tag: r.row.transaction_tag } : {}),
    });
  }
  return out;
}

describe('CSV records: line numbers and raw text', () => {
  it('counts the header as line 1 and skips empty lines without losing count, leaving them out of the next record', async () => {
    expect(await read(`t1,a${REST}\n\n\nt2,a${REST}\nt3,a${REST}`)).toEqual([
      { index: 0, line: 2, raw: `t1,a${REST}`, tag: 't1' },
      { index: 1, line: 5, raw: `t2,a${REST}`, tag: 't2' },
      { index: 2, line: 6, raw: `t3,a${REST}`, tag: 't3' },
    ]);
  });

  it('gives a quoted cell spanning lines its last line, and counts on after it', async () => {
    expect(await read(`"t\n1",a${REST}\nt2,a${REST}\n`)).toEqual([
      { index: 0, line: 3, raw: `"t\n1",a${REST}`, tag: 't\n1' },
      { index: 1, line: 4, raw: `t2,a${REST}`, tag: 't2' },
    ]);
  });

  it('counts a CRLF inside a quoted cell as one line end, as outside one', async () => {
    // csv-parse counts the CR and the LF of a quoted CRLF as a line each: a reject named the wrong line.
    const body = `"t\r\n1",a${REST}\r\nt2,a${REST}\r\n"t\r\r\n3","a\r\nb"${REST}\r\nt4,a${REST}\r\n`;
    const records = await read(body, undefined, `${HEADER}\r\n`);
    expect(records.map((r) => [r.line, r.tag])).toEqual([
      [3, 't\r\n1'],
      [4, 't2'],
      [8, 't\r\r\n3'],
      [9, 't4'],
    ]);
    for (const size of [1, 3, 7]) expect(await read(body, size, `${HEADER}\r\n`)).toEqual(records);
  });

  it('numbers CRLF files the same, the line end left out of the raw text', async () => {
    const records = await read(`t1,a${REST}\r\n\r\nt2,a${REST}\r\n`, undefined, `${HEADER}\r\n`);
    expect(records.map((r) => [r.line, r.tag])).toEqual([
      [2, 't1'],
      [4, 't2'],
    ]);
    // Neither the line end nor the empty line before a record is part of it.
    expect(records[0].raw).toBe(`t1,a${REST}`);
    expect(records[1].raw).toBe(`t2,a${REST}`);
  });

  it('reads a file whose line ends change midway, either way, or are CR alone', async () => {
    const lines = (header: string, body: string) => read(body, undefined, header).then((rs) => rs.map((r) => [r.line, r.tag ?? r.error]));
    expect(await lines(`${HEADER}\r\n`, `t1,a${REST}\r\nt2,a${REST}\nt3,a${REST}\n\nt4,a${REST}\r\n`)).toEqual([
      [2, 't1'],
      [3, 't2'],
      [4, 't3'],
      [6, 't4'],
    ]);
    expect(await lines(`${HEADER}\n`, `t1,a${REST}\r\n\r\nt2,a${REST}\r\nt3,a${REST}`)).toEqual([
      [2, 't1'],
      [4, 't2'],
      [5, 't3'],
    ]);
    expect(await lines(`${HEADER}\r`, `t1,a${REST}\r\rt2,a${REST}\r`)).toEqual([
      [2, 't1'],
      [4, 't2'],
    ]);
  });

  it('numbers a record with the wrong number of cells, and the records after it', async () => {
    expect(await read(`t1,a,x${REST}\nt2,a${REST}\n`)).toEqual([
      { index: 0, line: 2, raw: `t1,a,x${REST}`, error: 'BAD_USER_INPUT: expected 6 cells but got 7' },
      { index: 1, line: 3, raw: `t2,a${REST}`, tag: 't2' },
    ]);
  });

  it('gives a record the parser could not read its place among the others, in file order', async () => {
    const records = await read(`t1,a${REST}\nt"2,a${REST}\nt3,a${REST}\n`);
    expect(records.map((r) => [r.index, r.line, r.tag ?? r.error?.slice(0, 21)])).toEqual([
      [0, 2, 't1'],
      [-1, 3, 'Invalid Opening Quote'],
      [1, 4, 't3'],
    ]);
  });

  it('keeps the count when the input arrives in small chunks', async () => {
    const body = `t1,a${REST}\n\n"t\n2",a${REST}\r\nt3,a${REST}\n\r\nt4,a${REST}`;
    const whole = await read(body);
    expect(whole.map((r) => r.line)).toEqual([2, 5, 6, 8]);
    for (const size of [1, 3, 7]) expect(await read(body, size)).toEqual(whole);
  });

  it('allows spaces before a quoted cell, keeping the raw text as written', async () => {
    expect(await read(`t1, "a"${REST}\n`)).toEqual([{ index: 0, line: 2, raw: `t1, "a"${REST}`, tag: 't1' }]);
  });

  it('strips a byte order mark and still numbers from the header', async () => {
    expect(await read(`t1,a${REST}\n`, undefined, `\uFEFF${HEADER}\n`)).toEqual([{ index: 0, line: 2, raw: `t1,a${REST}`, tag: 't1' }]);
  });
});

/**
 * A record the parser cannot read (broken quoting) goes to the reject file, where an operator corrects it
 * and imports it again: it must come out whole, byte for byte, under the line number where it ends.
 * csv-parse reports such a record where it meets the error, with only the text read so far (`t"2,a,...`
 * came out as `t"`), once per error met in it, and under its own line count, which inside quotes counts
 * a CRLF twice.
 */
describe('CSV records the parser cannot read', () => {
  const errorOf = (r: Read) => r.error?.split(':')[0];

  it('keeps the whole line of a record broken midway, once, in file order', async () => {
    expect(await read(`t1,a${REST}\nt"2,a"${REST}\nt3,a${REST}\n`)).toEqual([
      { index: 0, line: 2, raw: `t1,a${REST}`, tag: 't1' },
      { index: -1, line: 3, raw: `t"2,a"${REST}`, error: expect.stringMatching(/^Invalid Opening Quote/) },
      { index: 1, line: 4, raw: `t3,a${REST}`, tag: 't3' },
    ]);
  });

  it('keeps every line a broken quote ran over, with their own line ends, under the last one', async () => {
    // After `"t2"x` the parser stays inside quotes until a quote is followed by a separator: `"a"` on the next line.
    const body = `t1,a${REST}\r\n"t2"x${REST}\r\nt3,"a"\r\nt4,a${REST}\r\n`;
    const records = await read(body, undefined, `${HEADER}\r\n`);
    expect(records.map((r) => [r.index, r.line, r.raw, r.tag ?? errorOf(r)])).toEqual([
      [0, 2, `t1,a${REST}`, 't1'],
      [-1, 4, `"t2"x${REST}\r\nt3,"a"`, 'Invalid Closing Quote'],
      [1, 5, `t4,a${REST}`, 't4'],
    ]);
    for (const size of [1, 3, 7]) expect(await read(body, size, `${HEADER}\r\n`)).toEqual(records);
  });

  it('keeps a quote left open at the end of the file, a truncated last record, whole', async () => {
    const body = `t1,a${REST}\n"t2,a,s,d\n\nb,e\n`;
    const records = await read(body);
    expect(records.map((r) => [r.index, r.line, r.raw, r.tag ?? errorOf(r)])).toEqual([
      [0, 2, `t1,a${REST}`, 't1'],
      [-1, 5, `"t2,a,s,d\n\nb,e`, 'Quote Not Closed'],
    ]);
    for (const size of [1, 3, 7]) expect(await read(body, size)).toEqual(records);
  });

  it('numbers the records after a broken one in a CRLF file with quoted line ends', async () => {
    const body = `"t\r\n1",a${REST}\r\nt"2,a${REST}\r\n"t\r\n3",a${REST}\r\nt4,a${REST}`;
    const records = await read(body, undefined, `${HEADER}\r\n`);
    expect(records.map((r) => [r.line, r.raw.length > 0, r.tag ?? errorOf(r)])).toEqual([
      [3, true, 't\r\n1'],
      [4, true, 'Invalid Opening Quote'],
      [6, true, 't\r\n3'],
      [7, true, 't4'],
    ]);
    expect(records[1].raw).toBe(`t"2,a${REST}`);
    for (const size of [1, 3, 7]) expect(await read(body, size, `${HEADER}\r\n`)).toEqual(records);
  });
});

describe('JSON-lines records', () => {
  it('strip a byte order mark before the first line, as CSV files do, whatever the chunks', async () => {
    const line = '{"transaction_tag":"t1","account_tag":"a"}';
    const bytes = Buffer.from(`\uFEFF${line}\n{"transaction_tag":"t2","account_tag":"a"}\n`, 'utf8');
    for (const size of [1, 2, 5, bytes.length]) {
      const chunks: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
      const out: Array<[number, string]> = [];
      for await (const r of readRecords(Readable.from(chunks), 'jsonl')) out.push([r.line, r.raw]);
      expect(out).toEqual([
        [1, line],
        [2, '{"transaction_tag":"t2","account_tag":"a"}'],
      ]);
    }
  });
});
