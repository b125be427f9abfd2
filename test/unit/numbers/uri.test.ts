import fc from 'fast-check';
import { percentDecode, ratingNumber, stripNumber, uriUserPart } from '../../../src/shared/domain/numbers/uri';

/** [what sends it, raw value, user part (null: not a URI), rating number] */
const REAL_WORLD: Array<[string, string, string | null, string]> = [
  // Kamailio pseudo-variables: $ru / $tu / $fu are bare URIs, $rU the user alone.
  ['Kamailio $ru, user=phone', 'sip:393299@host;user=phone', '393299', '393299'],
  ['Kamailio $ru with port and transport', 'sip:+390612345@10.0.0.1:5060;transport=udp;user=phone', '+390612345', '390612345'],
  ['Kamailio $tu with spaces in the user', 'sip:+39 06 1234@host;user=phone', '+39 06 1234', '39061234'],
  ['Kamailio $fu, anonymous caller', 'sip:anonymous@anonymous.invalid', 'anonymous', 'anonymous'],
  ['Kamailio $rU (user only)', '+390612345', null, '390612345'],
  ['Kamailio $hdr(To) with <> and spaces', '<sip:+39 06 1234@10.0.0.1:5060;user=phone>', '+39 06 1234', '39061234'],
  ['Kamailio $ru with a header part', 'sip:0612345@host?Subject=x', '0612345', '0612345'],
  ['Kamailio $ru, IPv6 host', 'sip:123@[2001:db8::1]:5060', '123', '123'],
  ['Kamailio $ru, IPv6 host and params', 'sip:+4420794600@[2001:db8::1];transport=tcp', '+4420794600', '4420794600'],
  // OpenSIPS
  ['OpenSIPS $ru, uppercase scheme and host', 'SIP:123@HOST', '123', '123'],
  ['OpenSIPS $ru with password', 'sip:1001:secret@pbx.example.com', '1001', '1001'],
  ['OpenSIPS $ru, percent-encoded +', 'sip:%2B3906@h', '+3906', '3906'],
  ['OpenSIPS $ru, isub in the user part', 'sip:123;isub=1@h', '123', '123'],
  [
    'OpenSIPS $ru, dashes and user params',
    'sip:+1-202-555-0100;npdi;rn=+1-202-555-0000@gw.example.net;user=phone',
    '+1-202-555-0100',
    '12025550100',
  ],
  // Asterisk PJSIP headers
  ['PJSIP From with tag', '"Bob" <sip:100@192.168.1.10:5060;transport=udp>;tag=abc123', '100', '100'],
  ['PJSIP P-Asserted-Identity tel', '<tel:+15551234567>', '+15551234567', '15551234567'],
  ['PJSIP Remote-Party-ID', '"Alice" <sip:+15551234567@gw>;party=calling;screen=yes;privacy=off', '+15551234567', '15551234567'],
  ['PJSIP Diversion', '<sip:+15551234567@gw>;reason=unconditional;counter=1', '+15551234567', '15551234567'],
  ['PJSIP To, sips and display name', '"Alice" <sips:+1-202-555-0100@example.com>', '+1-202-555-0100', '12025550100'],
  ['display name with escaped quotes and <>', '"Al \\"the <phone>\\" ice" <sip:55@h>;tag=1', '55', '55'],
  ['display name ending in an escaped backslash', '"back\\\\" <sip:66@h>', '66', '66'],
  ['token display name', 'Alice Smith <sip:+44 20 7946 0958@h>', '+44 20 7946 0958', '442079460958'],
  ['display name with a colon', 'Support: line 1 <sip:77@h>', '77', '77'],
  ['spaces around <> (LWS)', '  "A"   <  sip:88@h  >  ', '88', '88'],
  // tel URIs
  ['tel with phone-context', 'tel:+39-06-1234;phone-context=example.com', '+39-06-1234', '39061234'],
  ['tel local number with phone-context', 'tel:7042;phone-context=+1-202-555', '7042', '7042'],
  ['tel with extension', 'tel:+3906;ext=1', '+3906', '3906'],
  ['tel with dots and parentheses', 'TEL:+1.(202).555.0100', '+1.(202).555.0100', '12025550100'],
  ['tel sent with a host', 'tel:+3906123@gw.example.net', '+3906123', '3906123'],
  // plain numbers
  ['plain, spaces', '+39 06 1234', null, '39061234'],
  ['plain, parentheses and dot', '(020) 555.0100', null, '0205550100'],
  ['plain digits', '393299', null, '393299'],
  ['plain, star and hash kept', '*21#', null, '*21#'],
  // no user part
  ['URI without a user part', 'sip:host', '', ''],
  ['URI with an empty user part', 'sip:@host', '', ''],
  ['IPv6 host without user', 'sip:[2001:db8::1]:5060', '', ''],
  ['@ only inside headers', 'sip:host?Refer-To=a@b', '', ''],
  ['empty tel', 'tel:;phone-context=x', '', ''],
  // not URIs
  ['unclosed <', '<sip:123@host', null, '<sip:123@host'],
  ['unclosed quote', '"Bob <sip:123@host>', null, '"Bob<sip:123@host>'],
  ['other scheme', 'mailto:123@host', null, 'mailto:123@host'],
  ['<> around a plain number', '<393299>', null, '<393299>'],
];

describe('uriUserPart and ratingNumber on what proxies really send', () => {
  it.each(REAL_WORLD)('%s: %s', (_what, raw, user, rated) => {
    expect(uriUserPart(raw)).toBe(user);
    expect(ratingNumber(raw)).toBe(rated);
  });

  it('a < inside a bare URI parameter does not make it a name-addr', () => {
    expect(uriUserPart('sip:1@h;x=<y>')).toBe('1');
  });
});

describe('percent-decoding of the user part', () => {
  it.each<[string, string]>([
    ['sip:%2B39%2006@h', '+39 06'],
    ['sip:%C3%A9lodie@h', 'élodie'],
    ['sip:%e2%82%ac1@h', '€1'], // lower-case hex
    ['sip:%F0%9F%98%80@h', '\u{1f600}'],
    ['sip:123%3Bx@h', '123;x'], // decoded after the cut: an escaped ';' is data
    ['sip:12%@h', '12%'],
    ['sip:12%2@h', '12%2'],
    ['sip:%ZZ1@h', '%ZZ1'],
    ['sip:%C3@h', '%C3'], // half a character
    ['sip:%C3%41@h', '%C3A'], // a bad continuation: the lead stays, the next escape decodes
    ['sip:%FF%41@h', '%FFA'],
    ['sip:%C0%AF@h', '%C0%AF'], // overlong '/'
    ['sip:%ED%A0%80@h', '%ED%A0%80'], // a surrogate half
    ['sip:%00%0A1@h', '%00%0A1'], // controls stay escaped
    ['sip:%C2%85@h', '%C2%85'], // C1 control
    ['sip:%EF%BB%BF1@h', '%EF%BB%BF1'], // a BOM the decoder would swallow
    ['sip:%25%32%42@h', '%2B'], // decoded once only
  ])('%s -> %s', (raw, user) => {
    expect(uriUserPart(raw)).toBe(user);
  });

  it('leaves text without % untouched', () => {
    expect(percentDecode('abc')).toBe('abc');
  });
});

// ---- properties -------------------------------------------------------------------------

const digits = fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 1, maxLength: 20 });
const separator = fc.constantFrom(' ', '-', '.', '(', ')');

/** `d` with runs of separators inserted before, between and after its digits. */
const formatted = (d: string) =>
  fc.array(fc.array(separator, { maxLength: 3 }), { minLength: d.length + 1, maxLength: d.length + 1 }).map((runs) => {
    let out = runs[0].join('');
    for (let i = 0; i < d.length; i++) out += d[i] + runs[i + 1].join('');
    return out;
  });

const digitsAndFormatted = digits.chain((d) => formatted(d).map((f) => [d, f] as const));

const hostPart = fc.constantFrom('host', 'gw.example.net:5060', '10.0.0.1', '[2001:db8::1]:5060', 'HOST');
const uriTail = fc.constantFrom('', ';user=phone', ';transport=tcp;user=phone', '?Subject=x', ';lr?X-H=a@b');
const scheme = fc.constantFrom('sip', 'sips', 'SIP', 'Sips', 'tel', 'TEL');
const displayName = fc.oneof(
  fc.constant(''),
  fc.string({ unit: fc.constantFrom(..."abcXYZ019 -.!%*_+`'~"), minLength: 1, maxLength: 12 }).map((s) => `${s.trim() || 'x'} `),
  fc.string({ unit: fc.constantFrom(...'ab <>@:;,"\\sip'), maxLength: 12 }).map((s) => `"${s.replace(/["\\]/g, '\\$&')}" `),
);
const headerParams = fc.constantFrom('', ';tag=abc123', ';party=calling;privacy=off', ';reason=unconditional');

/** A URI around a user part, with its scheme's own suffix (tel has no host). */
const uriAround = (user: string) =>
  fc
    .tuple(scheme, hostPart, uriTail)
    .map(([s, host, tail]) => (s.toLowerCase() === 'tel' ? `${s}:${user}${tail.replace('?X-H=a@b', '')}` : `${s}:${user}@${host}${tail}`));

describe('properties', () => {
  it('separators and a leading + inside any URI form never change the number: ratingNumber(sip:+<formatted d>@host) = d', () => {
    fc.assert(
      fc.property(digitsAndFormatted, fc.boolean(), hostPart, uriTail, ([d, f], plus, host, tail) => {
        expect(ratingNumber(`sip:${plus ? '+' : ''}${f}@${host}${tail}`)).toBe(d);
        expect(ratingNumber(`${plus ? '+' : ''}${f}`)).toBe(d);
      }),
    );
  });

  it('wrapping a URI in <> with a display name and header parameters never changes the result', () => {
    const cases = digitsAndFormatted.chain(([, f]) => fc.tuple(uriAround(`+${f}`), displayName, headerParams));
    fc.assert(
      fc.property(cases, ([uri, name, params]) => {
        const wrapped = `${name}<${uri}>${params}`;
        expect(uriUserPart(wrapped)).toBe(uriUserPart(uri));
        expect(ratingNumber(wrapped)).toBe(ratingNumber(uri));
      }),
    );
  });

  it('ratingNumber is idempotent on its output for numbers and URIs', () => {
    const user = fc.oneof(
      digitsAndFormatted.map(([, f]) => f),
      fc.string({ unit: fc.constantFrom(...'0123456789*#+abc -.()%2B'), maxLength: 20 }),
    );
    const raw = user.chain((u) =>
      fc.oneof(
        fc.constant(u),
        uriAround(u),
        uriAround(u).chain((uri) => displayName.map((n) => `${n}<${uri}>`)),
      ),
    );
    fc.assert(
      fc.property(raw, (r) => {
        const once = ratingNumber(r);
        expect(ratingNumber(once)).toBe(once);
      }),
    );
  });

  it('total on any text: never throws, and its number has no visual separator and no leading +', () => {
    const anyText = fc.oneof(
      fc.string({ maxLength: 60 }),
      fc.string({ unit: fc.constantFrom(...'sipte:<>"\\@;?%2B +-.()0123456789'), maxLength: 40 }),
      fc.string({ unit: 'binary', maxLength: 30 }),
      // Bare digits with or without leading +: the fast path of ratingNumber.
      fc.string({ unit: fc.constantFrom(...'+0123456789'), maxLength: 20 }),
    );
    fc.assert(
      fc.property(anyText, (s) => {
        const user = uriUserPart(s);
        const rated = ratingNumber(s);
        expect(user === null || typeof user === 'string').toBe(true);
        expect(rated).not.toMatch(/^\+|[ \-.()]/);
        expect(rated).toBe(stripNumber(user ?? s));
      }),
    );
  });

  it('percent-decoding round-trips encodeURIComponent of any well-formed, control-free text', () => {
    const printable = fc
      .string({ unit: 'grapheme', maxLength: 20 })
      // eslint-disable-next-line no-control-regex
      .filter((s) => !/[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/.test(s));
    fc.assert(fc.property(printable, (s) => expect(percentDecode(encodeURIComponent(s))).toBe(s)));
  });
});
