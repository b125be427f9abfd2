import { expectRefused } from '../../support/refusal';
import fc from 'fast-check';
import { ServiceError } from '../../../src/shared/infra/errors';
import {
  address,
  email,
  hasLoneSurrogate,
  host,
  lookup,
  mobile,
  number,
  prefix,
  tag,
  tagList,
  text,
  textProblem,
  type Parse,
} from '../../../src/shared/domain/validation/text';

const hex = (c: number) => `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Every control character the rules refuse: C0, DEL, C1, and the line/paragraph separators. */
const CONTROLS = [...range(0x00, 0x1f), 0x7f, ...range(0x80, 0x9f), 0x2028, 0x2029];

/** Every kind, with a value it accepts and a place inside that value where a character may go. */
const KINDS: Array<{ name: string; parse: Parse<unknown>; good: string; insert: (c: string) => string }> = [
  { name: 'tag', parse: tag, good: 'acc 1', insert: (c) => `acc${c}1` },
  { name: 'text', parse: text(), good: 'Alice Smith', insert: (c) => `Alice${c}Smith` },
  { name: 'number', parse: number, good: '+442071234567', insert: (c) => `+44${c}2071234567` },
  { name: 'prefix', parse: prefix, good: '4420', insert: (c) => `44${c}20` },
  { name: 'address', parse: address, good: 'gw.example.net:5060', insert: (c) => `gw${c}.example.net:5060` },
  { name: 'host', parse: host, good: 'gw.example.net', insert: (c) => `gw${c}.example.net` },
  { name: 'email', parse: email, good: 'ops@example.com', insert: (c) => `op${c}s@example.com` },
  { name: 'mobile', parse: mobile, good: '+44 20 7946 0958', insert: (c) => `+44 20${c}7946 0958` },
  { name: 'tagList', parse: (f, v) => tagList(f, [v])[0], good: 'vip', insert: (c) => `v${c}ip` },
];

describe('text rules shared by every surface', () => {
  it.each(KINDS)('$name accepts its sample', ({ parse, good }) => {
    expect(parse('f', good)).toBe(good);
  });

  it.each(KINDS)('$name refuses every C0, DEL, C1 and line-separator character, anywhere', ({ parse, insert }) => {
    for (const c of CONTROLS) {
      const ch = String.fromCharCode(c);
      for (const value of [insert(ch), `${ch}${insert('')}`, `${insert('')}${ch}`]) {
        try {
          expectRefused(parse, value);
        } catch (err) {
          throw new Error(`${hex(c)} in ${JSON.stringify(value)}: ${(err as Error).message}`);
        }
      }
    }
  });

  it.each(KINDS)(
    '$name refuses lone surrogates (as JSON.parse makes them) and accepts no U+FFFD substitute silently',
    ({ parse, insert }) => {
      for (const lone of ['\ud800', '\udbff', '\udc00', '\udfff', '\udc00\ud800']) expectRefused(parse, insert(lone));
      // JSON.parse keeps an escaped lone surrogate as it is: the string the resolvers see.
      expectRefused(parse, insert(JSON.parse('"\\ud83d"') as string));
    },
  );

  it.each(KINDS)('$name refuses leading and trailing whitespace rather than trimming it', ({ parse, good }) => {
    for (const ws of [' ', '\u00a0', '\u3000', '\ufeff']) {
      expectRefused(parse, `${ws}${good}`);
      expectRefused(parse, `${good}${ws}`);
    }
  });

  it.each(KINDS)('$name refuses values that are not strings', ({ parse }) => {
    for (const bad of [5, true, {}, ['x']]) expectRefused(parse, bad);
  });

  it('detects unpaired surrogates only', () => {
    expect(hasLoneSurrogate('a\ud83d\ude00b')).toBe(false); // 😀: a pair
    expect(hasLoneSurrogate('\ud83d')).toBe(true);
    expect(hasLoneSurrogate('\ude00')).toBe(true);
    expect(hasLoneSurrogate('\ude00\ud83d')).toBe(true); // reversed: both unpaired
    expect(hasLoneSurrogate('\ud83d\ud83d\ude00')).toBe(true); // first high has no low
  });

  it('property: a string of well-formed, non-control characters without surrounding whitespace passes the shared rules', () => {
    const safe = fc
      .string({ unit: 'grapheme', minLength: 1, maxLength: 40 })
      .filter((s) => !/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(s) && s.trim() === s); // eslint-disable-line no-control-regex
    fc.assert(fc.property(safe, (s) => textProblem(s, 1, 1000) === null));
  });

  it('property: any string holding a lone surrogate or a control character is refused by every kind', () => {
    const poison = fc.constantFrom(...CONTROLS.map((c) => String.fromCharCode(c)), '\ud800', '\udfff');
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), poison, fc.string({ maxLength: 20 }), (a, p, b) => {
        for (const { parse, insert } of KINDS) expect(() => parse('f', insert(`${a}${p}${b}`))).toThrow(ServiceError);
      }),
    );
  });

  it('property: hasLoneSurrogate agrees with a UTF-8 round trip (what BSON would store)', () => {
    fc.assert(
      // Raw UTF-16 units, surrogate halves often: pairs, reversed pairs and lone halves all occur.
      fc.property(
        fc
          .array(fc.oneof(fc.integer({ min: 0xd800, max: 0xdfff }), fc.integer({ min: 0, max: 0xffff })), { maxLength: 30 })
          .map((units) => String.fromCharCode(...units)),
        (s) => {
          const roundTrip = Buffer.from(s, 'utf8').toString('utf8');
          expect(hasLoneSurrogate(s)).toBe(roundTrip !== s);
        },
      ),
    );
  });

  describe('lengths count characters (code points)', () => {
    it('tag: 1 to 128', () => {
      expect(tag('f', 'x'.repeat(128))).toHaveLength(128);
      expectRefused(tag, 'x'.repeat(129), /at most 128 characters/);
      expectRefused(tag, '', /must not be empty/);
      // 128 emoji are 256 UTF-16 units but 128 characters.
      expect(tag('f', '\u{1f600}'.repeat(128))).toHaveLength(256);
      expectRefused(tag, '\u{1f600}'.repeat(129), /at most 128 characters/);
    });

    it('text: 0 to 256 (names), descriptions 0 to 1024', () => {
      expect(text()('f', '')).toBe('');
      expect(text()('f', 'n'.repeat(256))).toHaveLength(256);
      expectRefused(text(), 'n'.repeat(257), /at most 256/);
      expect(text(1024)('f', 'd'.repeat(1024))).toHaveLength(1024);
      expectRefused(text(1024), 'd'.repeat(1025), /at most 1024/);
    });

    it('number: 1 to 256, spaces as separators but no other whitespace in the number', () => {
      expect(number('f', '9'.repeat(256))).toHaveLength(256);
      expectRefused(number, '9'.repeat(257));
      expectRefused(number, '');
      expect(number('f', '44 20')).toBe('44 20');
      expectRefused(number, '44\u00a020', /whitespace other than spaces/);
      expectRefused(number, 'sip:44\u300020@host', /whitespace other than spaces/);
      expect(number('f', 'anonymous')).toBe('anonymous');
    });

    it('prefix: 0 to 64, no whitespace', () => {
      expect(prefix('f', '')).toBe('');
      expectRefused(prefix, '4'.repeat(65));
      expectRefused(prefix, '44 20');
    });

    it('tag lists: at most 100 entries, each a tag, no repeats; the entry is named', () => {
      expect(
        tagList(
          'f',
          Array.from({ length: 100 }, (_, i) => `t${i}`),
        ),
      ).toHaveLength(100);
      expectRefused(
        tagList,
        Array.from({ length: 101 }, (_, i) => `t${i}`),
        /at most 100 entries/,
      );
      expectRefused(tagList, ['a', 'a'], /"a" more than once/);
      expectRefused(tagList, ['ok', 'x'.repeat(129)], /entry 1 must be at most 128/);
      expectRefused(tagList, ['ok', ' pad'], /entry 1 must not start or end with whitespace/);
      expectRefused(tagList, ['ok', 7], /entry 1 must be a string/);
      expectRefused(tagList, 'a', /must be a list/);
    });

    it('e-mail: at most 254', () => {
      expect(email('f', `${'a'.repeat(64)}@${'b'.repeat(185)}.com`)).toHaveLength(254);
      expectRefused(email, `${'a'.repeat(64)}@${'b'.repeat(186)}.com`);
    });

    it('refuses an oversized value without scanning it for anything else', () => {
      expectRefused(tag, `${'x'.repeat(1_000_000)}\u0000`, /at most 128/);
    });
  });

  describe('number: plain numbers and SIP/TEL URIs as proxies send them (docs/DESIGN.md section 4)', () => {
    it.each([
      'sip:+39 06 1234@host;user=phone',
      '<sip:+39 06 1234@10.0.0.1:5060;user=phone>',
      '"Alice" <sips:+1-202-555-0100@example.com>',
      '"Al \\"the phone\\" ice" <sip:100@pbx.example.com>;tag=a1b2',
      'tel:+39-06-1234;phone-context=example.com',
      'sip:0612345@host?Subject=x',
      'SIP:123@HOST',
      'sip:%2B3906@h',
      'sip:123@[2001:db8::1]:5060',
      '+39 06 1234',
      '(020) 555.0100',
      '393299',
      'x'.repeat(200) + ' <sip:1@h>',
    ])('accepts %s and stores it as sent', (value) => {
      expect(number('f', value)).toBe(value);
    });

    it.each(['sip:@host', 'sip:host', 'tel:', '<sips:;user=phone@h>', '+', '( - . )', 'sip:%20@host', '"Bob" <tel:+>'])(
      'refuses %s, which names no number, saying so',
      (value) => expectRefused(number, value, /must name a number/),
    );

    it('keeps the shared rules for URIs too: controls, length, surrounding whitespace', () => {
      expectRefused(number, 'sip:39\u000006@host', /control characters/);
      expectRefused(number, `sip:${'1'.repeat(250)}@host`, /at most 256/);
      expectRefused(number, ' sip:1@h', /whitespace/);
    });
  });

  it('address: host or IP, optionally with a port', () => {
    for (const good of [
      '10.0.0.1',
      '10.0.0.1:5060',
      'gw.example.net',
      'gw.example.net:5061',
      '2001:db8::1',
      '[2001:db8::1]',
      '[2001:db8::1]:5060',
      'fe80::1%eth0',
    ]) {
      expect(address('f', good)).toBe(good);
    }
    for (const bad of [
      '',
      ':5060',
      '10.0.0.1:',
      '10.0.0.1:0',
      '10.0.0.1:65536',
      '10.0.0.1:50a',
      '[10.0.0.1]:5060',
      '[2001:db8::1',
      'a b',
      'gw_1.example',
      'sip:10.0.0.1',
      'x'.repeat(300),
    ]) {
      expectRefused(address, bad);
    }
  });

  it('e-mail refuses NUL and other controls (the regex alone let them through)', () => {
    expectRefused(email, 'ops\u0000@example.com');
    expectRefused(email, 'ops@example.com\u0085');
  });

  it('e-mail is an address a mail server takes, not a display form (fuzz finding: <alice@example.com> was stored)', () => {
    for (const good of ['ops@example.com', 'first.last+tag@mail.example.co.uk', "o'brien@example.ie", 'x@a-b.example'])
      expect(email('f', good)).toBe(good);
    for (const bad of [
      '<alice@example.com>',
      '"Alice" <alice@example.com>',
      'alice@example',
      'a..b@example.com',
      '.a@example.com',
      'a@-example.com',
      'a@example.com.',
      'a,b@example.com',
      'a@b@example.com',
      '"a b"@example.com',
    ]) {
      expectRefused(email, bad);
    }
  });

  it('lookup: any well-formed string (records stored before the rules stay reachable), never a lone surrogate', () => {
    expect(lookup('f', ' legacy\u001b ')).toBe(' legacy\u001b ');
    expectRefused(lookup, 'alice\ud800');
    expectRefused(lookup, 5);
  });
});
