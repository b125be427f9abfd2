import { Readable } from 'node:stream';
import {
  DeckError,
  deckLine,
  deckTiming,
  headerProblems,
  parseEffective,
  readDeck,
  timingText,
  type DeckRecord,
} from '../../../src/shared/domain/rate-decks';
import { timingKey } from '../../../src/shared/domain/rating/timing';

async function records(text: string): Promise<DeckRecord[]> {
  const out: DeckRecord[] = [];
  for await (const r of readDeck(Readable.from([text]))) out.push(r);
  return out;
}

describe('deck header', () => {
  it('needs prefix and rate, knows the optional columns, refuses unknown or repeated ones', () => {
    expect(headerProblems(['prefix', 'rate'])).toEqual([]);
    expect(headerProblems(['description', 'prefix', 'interval_start', 'rate_increment', 'connect_fee', 'rate'])).toEqual([]);
    expect(headerProblems(['prefix'])).toEqual(['missing required column "rate"']);
    expect(headerProblems(['prefix', 'rate', 'price'])[0]).toMatch(/unknown column "price"/);
    expect(headerProblems(['prefix', 'rate', 'rate'])).toEqual(['column "rate" appears twice']);
  });

  it('throws DeckError for a bad header or an empty deck', async () => {
    await expect(records('prefix,price\n44,1\n')).rejects.toThrow(DeckError);
    await expect(records('')).rejects.toThrow(/empty/);
  });
});

describe('deck lines', () => {
  it('applies the defaults of createPricelistRate', () => {
    expect(deckLine({ prefix: '44', rate: '12' })).toEqual({
      ok: true,
      rate: { prefix: '44', rate: 12, connect_fee: 0, rate_increment: 1, interval_start: 0, description: null },
    });
    expect(deckLine({ prefix: ' 44 ', rate: '12', connect_fee: '', description: '' })).toMatchObject({
      ok: true,
      rate: { prefix: '44', connect_fee: 0, description: null },
    });
  });

  it('reads every column', () => {
    expect(
      deckLine({ prefix: '4420', rate: '7', connect_fee: '3', rate_increment: '60', interval_start: '5', description: 'London' }),
    ).toEqual({
      ok: true,
      rate: { prefix: '4420', rate: 7, connect_fee: 3, rate_increment: 60, interval_start: 5, description: 'London' },
    });
  });

  it('normalises prefixes as the rating index does', () => {
    expect(deckLine({ prefix: '+44 (20) 7-1.2', rate: '1' })).toMatchObject({ ok: true, rate: { prefix: '4420712' } });
  });

  it.each([
    [/prefix: is required/, { prefix: '', rate: '1' }, null],
    [/prefix: must be digits/, { prefix: '44a', rate: '1' }, null],
    [/prefix: must be at most 64/, { prefix: '4'.repeat(65), rate: '1' }, null],
    [/rate: is required/, { prefix: '44', rate: '' }, '44'],
    [/rate: must be a non-negative integer/, { prefix: '44', rate: '-1' }, '44'],
    [/rate: must be a non-negative integer/, { prefix: '44', rate: '0.5' }, '44'],
    [/rate: must be an integer/, { prefix: '44', rate: 'ten' }, '44'],
    [/rate: must be an integer/, { prefix: '44', rate: '99999999999999999999' }, '44'],
    // What the API's 32-bit Int fields can show and edit: a deck must not store a rate the API cannot read.
    [/rate: must be at most 2147483647/, { prefix: '44', rate: '3000000000' }, '44'],
    [/connect_fee: must be at most 2147483647/, { prefix: '44', rate: '1', connect_fee: '2500000000' }, '44'],
    [/connect_fee/, { prefix: '44', rate: '1', connect_fee: '-2' }, '44'],
    [/rate_increment/, { prefix: '44', rate: '1', rate_increment: '1.5' }, '44'],
    [/interval_start/, { prefix: '44', rate: '1', interval_start: 'x' }, '44'],
    [/description: must not contain control characters/, { prefix: '44', rate: '1', description: 'a\u0001b' }, '44'],
    [/description: must be at most 1024/, { prefix: '44', rate: '1', description: 'x'.repeat(1025) }, '44'],
  ])('rejects a line: %s', (reason, row, prefix) => {
    const result = deckLine(row);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.reason).toMatch(/^BAD_USER_INPUT: /);
      expect(result.reason).toMatch(reason);
      expect(result.prefix).toBe(prefix);
    }
  });
});

describe('deck timings', () => {
  const weekdays = [1, 2, 3, 4, 5];
  const base = { prefix: '44', rate: '10' };

  it('knows the timing columns', () => {
    expect(headerProblems(['prefix', 'rate', 'days', 'start_time', 'end_time', 'holidays'])).toEqual([]);
    expect(headerProblems(['prefix', 'rate', 'start'])[0]).toMatch(/unknown column "start"/);
  });

  it.each([
    ['1-5', weekdays],
    ['1,2,3,4,5', weekdays],
    ['5,4,3,2,1', weekdays],
    ['mon-fri', weekdays],
    ['Mon-FRI', weekdays],
    ['mon,tue,wed,thu,fri', weekdays],
    ['1-3,thu-5', weekdays],
    [' 1 - 5 ', weekdays],
    ['6-7', [6, 7]],
    ['sat,sun', [6, 7]],
    ['SAT-sun', [6, 7]],
    ['sun, sat', [6, 7]],
    ['3', [3]],
    ['wed', [3]],
  ])('reads days %j', (days, expected) => {
    expect(deckTiming({ ...base, days })).toEqual({ days: expected, start: null, end: null, holidays: null });
  });

  it('gives every spelling of one set of days the same key', () => {
    const keys = new Set(['1-5', '1,2,3,4,5', 'mon-fri', 'fri,thu,wed,tue,mon'].map((days) => timingKey(deckTiming({ ...base, days }))));
    expect(keys.size).toBe(1);
  });

  it('reads times HH:MM:SS and HH:MM (as HH:MM:SS), also across midnight', () => {
    expect(deckTiming({ ...base, start_time: '08:00:00', end_time: '18:00:00' })).toEqual({
      days: null,
      start: '08:00:00',
      end: '18:00:00',
      holidays: null,
    });
    expect(deckTiming({ ...base, start_time: '08:00', end_time: '18:30' })).toMatchObject({ start: '08:00:00', end: '18:30:00' });
    expect(deckTiming({ ...base, start_time: '8:00', end_time: '9:05:30' })).toMatchObject({ start: '08:00:00', end: '09:05:30' });
    expect(deckTiming({ ...base, start_time: '22:00', end_time: '06:00' })).toMatchObject({ start: '22:00:00', end: '06:00:00' });
    expect(deckTiming({ ...base, start_time: '18:00', end_time: '00:00' })).toMatchObject({ start: '18:00:00', end: '00:00:00' });
  });

  it.each([
    ['only', 'only'],
    ['exclude', 'exclude'],
    [' ONLY ', 'only'],
    ['Exclude', 'exclude'],
  ])('reads holidays %j', (holidays, expected) => {
    expect(deckTiming({ ...base, holidays })).toEqual({ days: null, start: null, end: null, holidays: expected });
  });

  it('is no timing when the cells are empty, absent, or say every day all day', () => {
    expect(deckTiming(base)).toBeNull();
    expect(deckTiming({ ...base, days: '', start_time: ' ', end_time: '', holidays: '' })).toBeNull();
    expect(deckTiming({ ...base, days: '1-7' })).toBeNull();
    expect(deckTiming({ ...base, days: 'mon-sun', start_time: '08:00', end_time: '18:00' })).toEqual({
      days: null,
      start: '08:00:00',
      end: '18:00:00',
      holidays: null,
    });
  });

  it('puts a timing on the line, and none at all on an untimed line', () => {
    const timed = deckLine({ ...base, days: 'mon-fri', start_time: '08:00', end_time: '18:00', holidays: 'exclude' });
    expect(timed).toEqual({
      ok: true,
      rate: {
        prefix: '44',
        rate: 10,
        connect_fee: 0,
        rate_increment: 1,
        interval_start: 0,
        description: null,
        timing: { days: weekdays, start: '08:00:00', end: '18:00:00', holidays: 'exclude' },
      },
    });
    const untimed = deckLine({ ...base, days: '', start_time: '', end_time: '', holidays: '' });
    expect(untimed.ok && untimed.rate).toStrictEqual({
      prefix: '44',
      rate: 10,
      connect_fee: 0,
      rate_increment: 1,
      interval_start: 0,
      description: null,
    });
  });

  it.each([
    [/^BAD_USER_INPUT: days: "8" is not a day/, { days: '8' }],
    [/^BAD_USER_INPUT: days: "0-5" is not a day/, { days: '0-5' }],
    [/^BAD_USER_INPUT: days: "monday" is not a day/, { days: 'monday' }],
    [/^BAD_USER_INPUT: days: "mon-" is not a day/, { days: 'mon-' }],
    [/^BAD_USER_INPUT: days: "1-2-3" is not a day/, { days: '1-2-3' }],
    [/^BAD_USER_INPUT: days: "" is not a day/, { days: '1,,2' }],
    [/^BAD_USER_INPUT: days: "1;2" is not a day/, { days: '1;2' }],
    [/^BAD_USER_INPUT: days: the range "fri-mon" runs backwards/, { days: 'fri-mon' }],
    [/^BAD_USER_INPUT: days: the range "7-6" runs backwards/, { days: '7-6' }],
    [/^BAD_USER_INPUT: days: a day is listed twice/, { days: '1-5,5' }],
    [/^BAD_USER_INPUT: days: a day is listed twice/, { days: 'sat,6' }],
    [/^BAD_USER_INPUT: end_time: give start_time and end_time both/, { start_time: '08:00' }],
    [/^BAD_USER_INPUT: start_time: give start_time and end_time both/, { end_time: '18:00' }],
    [/^BAD_USER_INPUT: start_time: must be a local time HH:MM:SS or HH:MM/, { start_time: '24:00', end_time: '06:00' }],
    [/^BAD_USER_INPUT: start_time: must be a local time/, { start_time: '08:60', end_time: '09:00' }],
    [/^BAD_USER_INPUT: start_time: must be a local time/, { start_time: '8am', end_time: '18:00' }],
    [/^BAD_USER_INPUT: end_time: must be a local time/, { start_time: '08:00', end_time: '18:00:60' }],
    [/^BAD_USER_INPUT: end_time: must be a local time/, { start_time: '08:00', end_time: '18.00' }],
    [/^BAD_USER_INPUT: end_time: equal to start_time: an empty window/, { start_time: '08:00', end_time: '08:00:00' }],
    [/^BAD_USER_INPUT: holidays: must be "only", "exclude" or empty/, { holidays: 'yes' }],
    [/^BAD_USER_INPUT: holidays: must be "only", "exclude" or empty/, { holidays: 'include' }],
  ])('rejects a line: %s', (reason, cells) => {
    const result = deckLine({ ...base, ...cells });
    expect(result).toEqual({ ok: false, reason: expect.stringMatching(reason), prefix: '44' });
    // Its timing is unknown (not even "untimed"): the line names its prefix, not which of its rates.
    expect(result).not.toHaveProperty('timing');
  });

  it('a line rejected for another reason still says which timing it names', () => {
    expect(deckLine({ ...base, rate: 'x', days: '6-7' })).toEqual({
      ok: false,
      reason: 'BAD_USER_INPUT: rate: must be an integer',
      prefix: '44',
      timing: { days: [6, 7], start: null, end: null, holidays: null },
    });
    expect(deckLine({ ...base, rate: 'x' })).toMatchObject({ ok: false, prefix: '44', timing: null });
  });

  it('spells a timing as a deck would, for messages', () => {
    expect(timingText({ days: [1, 2, 3, 4, 5], start: '08:00:00', end: '18:00:00', holidays: null })).toBe('days 1-5, 08:00:00-18:00:00');
    expect(timingText({ days: [1, 3, 6, 7], start: null, end: null, holidays: 'exclude' })).toBe('days 1,3,6-7, holidays exclude');
    expect(timingText({ days: null, start: null, end: null, holidays: 'only' })).toBe('holidays only');
  });
});

describe('readDeck', () => {
  it('streams rows with their line numbers; bad records become errors, not failures', async () => {
    const out = await records('\ufeffPrefix,Rate,Description\n44,1,UK\n\n49,2\n"33,3,"broken\n');
    expect(out[0]).toEqual({ line: 2, row: { prefix: '44', rate: '1', description: 'UK' } });
    expect(out[1]).toEqual({ line: 4, error: 'BAD_USER_INPUT: expected 3 cells but got 2', prefixCell: '49' });
    expect(out[2]).toMatchObject({ line: 5, error: expect.stringMatching(/^BAD_USER_INPUT: .*Quote/) });
    expect(out).toHaveLength(3);
  });

  it('marks a record with the wrong number of cells when the deck has timing columns (its timing is unknown)', async () => {
    const out = await records('prefix,rate,days\n44,1\n44,1,6-7\n');
    expect(out).toEqual([
      { line: 2, error: 'BAD_USER_INPUT: expected 3 cells but got 2', prefixCell: '44', timingUnread: true },
      { line: 3, row: { prefix: '44', rate: '1', days: '6-7' } },
    ]);
  });

  it('reads quoted cells across lines and CRLF line ends', async () => {
    const out = await records('prefix,rate,description\r\n1,2,"multi\nline"\r\n33,4,"a, b"\r\n');
    expect(out).toEqual([
      { line: 3, row: { prefix: '1', rate: '2', description: 'multi\nline' } },
      { line: 4, row: { prefix: '33', rate: '4', description: 'a, b' } },
    ]);
  });
});

describe('parseEffective', () => {
  it('takes ISO 8601 with Z, an offset or no zone (UTC)', () => {
    expect(parseEffective('2026-07-01T00:00:00Z')).toEqual(new Date(Date.UTC(2026, 6, 1)));
    expect(parseEffective('2026-07-01T00:00:00')).toEqual(new Date(Date.UTC(2026, 6, 1)));
    expect(parseEffective('2026-07-01T02:00:00+02:00')).toEqual(new Date(Date.UTC(2026, 6, 1)));
    expect(parseEffective('2026-06-30T19:30:00.000-04:30')).toEqual(new Date(Date.UTC(2026, 7 - 1, 1)));
  });

  it.each(['2026-07-01', 'tomorrow', '2026-02-30T00:00:00Z', '2026-07-01T00:00:00+24:00', ''])('refuses %j', (value) => {
    expect(parseEffective(value)).toBeNull();
  });
});
