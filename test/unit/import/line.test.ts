import { csvLine, headerProblems, jsonLine, splitTags } from '../../../src/shared/domain/imports/line';

const now = new Date('2026-02-01T00:00:00Z');
const row = {
  transaction_tag: 't1',
  account_tag: 'alice',
  source: '4930111',
  destination: '4930222',
  timestamp_begin: '2026-01-01T12:00:00Z',
  timestamp_end: '2026-01-01T12:00:38',
};

describe('CDR line parsing and validation', () => {
  it('accepts a complete CSV row and normalises its timestamps and optional cells', () => {
    expect(csvLine({ ...row, tags: ' night; vip | b2b ', source_ip: '', destination_account_tag: ' bob ' }, 2, now)).toEqual({
      ok: true,
      line: {
        line: 2,
        ...row,
        source_ip: null,
        carrier_ip: null,
        tags: ['night', 'vip', 'b2b'],
        destination_account_tag: 'bob',
        timestamp_auth: null,
        timestamp_begin: '2026-01-01T12:00:00.000Z',
        timestamp_end: '2026-01-01T12:00:38.000Z',
      },
    });
  });

  it('names the field of the first problem, as recordTransaction does', () => {
    expect(csvLine({ ...row, transaction_tag: '' }, 3, now)).toEqual({ ok: false, reason: 'BAD_USER_INPUT: transaction_tag: is required' });
    expect(csvLine({ ...row, timestamp_end: '2026-02-30T00:00:00' }, 3, now)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^BAD_USER_INPUT: timestamp_end: must be a datetime/),
    });
    expect(csvLine({ ...row, timestamp_auth: 'yesterday' }, 3, now)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^BAD_USER_INPUT: timestamp_auth:/),
    });
    expect(csvLine({ ...row, source: 'x'.repeat(300) }, 3, now)).toEqual({
      ok: false,
      reason: 'BAD_USER_INPUT: source: must be at most 256 characters',
    });
  });

  it('reads JSON lines: numbers as text, tags as a list or a separated string', () => {
    const json = JSON.stringify({ ...row, source: 4930111, tags: 'a|b' });
    expect(jsonLine(json, 7, now)).toMatchObject({ ok: true, line: { line: 7, source: '4930111', tags: ['a', 'b'] } });
    expect(jsonLine(JSON.stringify({ ...row, tags: ['x'] }), 7, now)).toMatchObject({ ok: true, line: { tags: ['x'] } });
  });

  it('refuses a name or number given as a JSON number that text cannot hold exactly, so two calls never share a tag', () => {
    // Asterisk uniqueids as numbers: sequence 20 and sequence 2 of one second parse to the same double.
    const tens = `{"transaction_tag":1774717331.20,"account_tag":"alice","source":"1","destination":"2","timestamp_begin":"2026-01-01T12:00:00Z","timestamp_end":"2026-01-01T12:00:38Z"}`;
    expect(jsonLine(tens, 3, now)).toEqual({
      ok: false,
      reason: 'BAD_USER_INPUT: transaction_tag: a JSON number is read as written only when it is a whole number below 2^53; quote it',
    });
    expect(jsonLine(tens.replace('1774717331.20', '9007199254740993'), 3, now)).toMatchObject({ ok: false });
    expect(jsonLine(JSON.stringify({ ...row, destination: 4.93e14 }), 3, now)).toMatchObject({
      ok: true,
      line: { destination: '493000000000000' },
    });
    // A timestamp's value, not its spelling, is what counts: a number of seconds stays accepted as before.
    expect(jsonLine(JSON.stringify({ ...row, transaction_tag: 1774717331 }), 3, now)).toMatchObject({
      ok: true,
      line: { transaction_tag: '1774717331' },
    });
  });

  it('rejects JSON lines that are not objects, unknown fields and bad JSON', () => {
    expect(jsonLine('[1,2]', 1, now)).toEqual({ ok: false, reason: 'BAD_USER_INPUT: a line must be a JSON object' });
    expect(jsonLine(JSON.stringify({ ...row, acount: 'x' }), 1, now)).toEqual({
      ok: false,
      reason: 'BAD_USER_INPUT: acount: unknown field',
    });
    expect(jsonLine('{"transaction_tag": ', 1, now)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^BAD_USER_INPUT: not valid JSON/),
    });
    expect(jsonLine(JSON.stringify({ ...row, tags: [1] }), 1, now)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^BAD_USER_INPUT: tags:/),
    });
  });

  it('checks CSV headers', () => {
    expect(headerProblems(Object.keys(row))).toEqual([]);
    expect(headerProblems([...Object.keys(row), 'tags', 'carrier_ip'])).toEqual([]);
    expect(headerProblems(['transaction_tag', 'account_tag', 'source', 'destination', 'timestamp_begin', 'timestamp_begin', 'x'])).toEqual([
      'column "timestamp_begin" appears twice',
      expect.stringMatching(/^unknown column "x"/),
      'missing required column "timestamp_end"',
    ]);
  });

  it('splits tags on ";" and "|" and drops empty ones', () => {
    expect(splitTags('a;b|c')).toEqual(['a', 'b', 'c']);
    expect(splitTags(' ; | ')).toBeNull();
  });
});
