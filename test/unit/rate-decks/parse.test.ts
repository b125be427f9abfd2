import { Readable } from 'node:stream';
import { DeckError, deckLine, headerProblems, parseEffective, readDeck, type DeckRecord } from '../../../src/shared/domain/rate-decks';

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

describe('readDeck', () => {
  it('streams rows with their line numbers; bad records become errors, not failures', async () => {
    const out = await records('\ufeffPrefix,Rate,Description\n44,1,UK\n\n49,2\n"33,3,"broken\n');
    expect(out[0]).toEqual({ line: 2, row: { prefix: '44', rate: '1', description: 'UK' } });
    expect(out[1]).toEqual({ line: 4, error: 'BAD_USER_INPUT: expected 3 cells but got 2', prefixCell: '49' });
    expect(out[2]).toMatchObject({ line: 5, error: expect.stringMatching(/^BAD_USER_INPUT: .*Quote/) });
    expect(out).toHaveLength(3);
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
