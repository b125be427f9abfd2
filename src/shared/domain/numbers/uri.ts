/**
 * Numbers as SIP proxies send them (docs/DESIGN.md section 4): plain numbers, `sip:`/`sips:`/`tel:` URIs,
 * name-addr forms with display names and `<>`. The one place they are taken apart; rating, the
 * validation of number fields and account tags all go through here, so a value means the same
 * number everywhere. Hand-written rather than a dependency: no maintained npm package does this
 * normalization, and a full RFC 3261 parser would refuse the lenient forms proxies really send
 * (spaces inside the user part, `tel:` with `@host`).
 *
 * Accepted shapes (the scheme in any case; surrounding spaces and tabs ignored):
 *   `sip:USER@host;params?headers`, the same with `sips:`, `tel:NUMBER;params`,
 *   any of them inside `<>`, optionally after a display name (`"Quoted \"name\""` or `Token name`)
 *   and followed by header parameters (`;tag=...`). Anything else is not a URI: a plain number.
 *
 * Edge cases, decided here so every caller agrees:
 * - A URI without a user part (`sip:host`, `sip:@host`, `sip:[2001:db8::1]:5060`, `tel:`) has the
 *   user part '' rather than null: null means "not a URI", and a URI naming no number must not be
 *   rated as if its whole text were one. Its rating number is '', which number fields refuse.
 * - The user part of a sip URI ends at the first `@`; when a `?` comes before that `@`, the `@`
 *   belongs to the headers (`sip:host?Subject=a@b`) and there is no user part.
 * - Parameters inside the user part (`sip:123;isub=1@h`, RFC 3261 telephone-subscriber) and a
 *   password (`sip:123:secret@h`) are not part of the number: the user part stops at `;` or `:`.
 *   A tel URI's number stops at `;` (`tel:+3906;ext=1` is 3906), `?` or, leniently, `@`.
 * - Percent escapes are decoded after that cut, so an escaped `;` (`%3B`) is data, not a delimiter.
 *   Only well-formed escapes spelling valid UTF-8 are decoded; a malformed or partial one (`%2`,
 *   `%ZZ`, a lone `%C3`) stays as written, and so does one spelling a control character, so the
 *   number rated on never holds a character the text rules refuse.
 * - The rating number drops every visual separator (space, `-`, `.`, `(`, `)`: RFC 3966 plus the
 *   space docs/DESIGN.md allows) wherever it appears, then the leading `+`. A repeated one (`++39`,
 *   `+ (+39)`, `%2B+39`) goes too, so rating its own output changes nothing. Other whitespace
 *   (tabs, no-break spaces) is kept, so number fields can refuse it.
 * - Non-URI text is its own user part: `+39 06 1234` and `(020) 555.0100` rate as 39061234 and
 *   0205550100. `<393299>` is not a URI and rates as `<393299>` (unreachable), not as 393299.
 * - An unterminated name-addr (`<sip:1@h`, `"Bob <sip:1@h>`) is not a URI.
 * - ratingNumber is idempotent on the numbers rating sees; text that only becomes a URI once
 *   separators are dropped (`s.ip:1@h`) or whose decoded user part spells one is not, and rates as
 *   unreachable either way.
 * Known limit: the written trunk prefix `+44 (0)20 ...` keeps its 0 (RFC 3966 has no such notion).
 */

const SCHEME = /^(sips?|tel):/i;
const VISUAL_SEPARATORS = /[ \-.()]/g;
const LEADING_PLUS = /^\++/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const HEX2 = /^[0-9A-Fa-f]{2}$/;

const utf8 = new TextDecoder('utf-8', { fatal: true });

const isLws = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';

/** Without surrounding SIP whitespace; a loop, as a `\s+$` regex backtracks quadratically on long inner runs. */
function trimLws(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isLws(s[start])) start++;
  while (end > start && isLws(s[end - 1])) end--;
  return s.slice(start, end);
}

/** Index of the quote closing a quoted-string opened at `start`, honouring `\` escapes; -1 if unclosed. */
function closingQuote(s: string, start: number): number {
  for (let i = start + 1; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === '"') return i;
  }
  return -1;
}

/**
 * The addr-spec of a name-addr (`"Name" <uri>;params`, `Name <uri>`, `<uri>`), the text itself
 * when there are no `<>`, or null when a quote or `<` is left open.
 */
function addrSpec(s: string): string | null {
  let from = 0;
  if (s.startsWith('"')) {
    const end = closingQuote(s, 0);
    if (end < 0) return null;
    from = end + 1;
  }
  const open = s.indexOf('<', from);
  // Text starting with a scheme is a bare URI even if a parameter value holds a '<'.
  if (from === 0 && (open < 0 || SCHEME.test(s))) return s;
  if (open < 0) return null;
  const close = s.indexOf('>', open + 1);
  if (close < 0) return null;
  return trimLws(s.slice(open + 1, close));
}

/** The number part of what follows `tel:`, before any parameter. */
function telSubscriber(rest: string): string {
  return rest.split(/[;?@]/, 1)[0];
}

/** The user of what follows `sip:`/`sips:`, without password or user parameters; '' when none. */
function sipUser(rest: string): string {
  const at = rest.indexOf('@');
  if (at < 0) return '';
  const headers = rest.indexOf('?');
  if (headers >= 0 && headers < at) return '';
  return rest.slice(0, at).split(/[;:]/, 1)[0];
}

/** Bytes of `%XX` escapes starting at `i`, stopping at the first non-escape. */
function escapedBytes(s: string, i: number, max: number): number[] {
  const bytes: number[] = [];
  while (bytes.length < max && s[i] === '%' && HEX2.test(s.slice(i + 1, i + 3))) {
    bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
    i += 3;
  }
  return bytes;
}

/** How many bytes the UTF-8 sequence led by `lead` has (1 for a stray continuation byte). */
function utf8Length(lead: number): number {
  if (lead >= 0xf0) return 4;
  if (lead >= 0xe0) return 3;
  if (lead >= 0xc0) return 2;
  return 1;
}

/**
 * The character the escapes at `i` spell and how many escapes that is, or null when they are not
 * one valid UTF-8 character or it is a control character. A BOM decodes to '' (the decoder drops
 * it), so it stays escaped too.
 */
function decodeAt(s: string, i: number): { ch: string; escapes: number } | null {
  const first = escapedBytes(s, i, 1);
  if (first.length === 0) return null;
  const bytes = escapedBytes(s, i, utf8Length(first[0]));
  try {
    const ch = utf8.decode(Uint8Array.from(bytes));
    return ch.length > 0 && !CONTROL.test(ch) ? { ch, escapes: bytes.length } : null;
  } catch {
    return null;
  }
}

/** Percent-decodes valid UTF-8 escapes (RFC 3986); anything else stays as written. */
export function percentDecode(s: string): string {
  if (!s.includes('%')) return s;
  let out = '';
  let i = 0;
  while (i < s.length) {
    const decoded = s[i] === '%' ? decodeAt(s, i) : null;
    out += decoded ? decoded.ch : s[i];
    i += decoded ? 3 * decoded.escapes : 1;
  }
  return out;
}

/**
 * The user part of a SIP/SIPS/TEL URI (any accepted form), percent-decoded, without password or
 * parameters, `+` and separators kept; '' for a URI without one; null when `raw` is not such a URI.
 */
export function uriUserPart(raw: string): string | null {
  const spec = addrSpec(trimLws(raw));
  const scheme = spec === null ? null : SCHEME.exec(spec);
  if (spec === null || scheme === null) return null;
  const rest = spec.slice(scheme[0].length);
  const user = scheme[1].toLowerCase() === 'tel' ? telSubscriber(rest) : sipUser(rest);
  return percentDecode(user);
}

/** A number's digits as rating matches them: visual separators dropped, then the leading `+`. */
export function stripNumber(number: string): string {
  return number.replace(VISUAL_SEPARATORS, '').replace(LEADING_PLUS, '');
}

/**
 * The number rating matches prefixes on: the user part of a URI (or the whole plain number), without
 * a leading `+` and without visual separators. Total: never throws; may return ''.
 */
export function ratingNumber(raw: string): string {
  return bareNumber(raw) ?? stripNumber(uriUserPart(raw) ?? raw);
}

/**
 * What ratingNumber returns for the usual destination, digits after any number of `+` (none included),
 * found without the URI parse and its regular expressions (rating runs it per call and party); null for anything else.
 */
function bareNumber(raw: string): string | null {
  let start = 0;
  while (start < raw.length && raw.charCodeAt(start) === 0x2b) start++;
  for (let i = start; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return null;
  }
  return start === 0 ? raw : raw.slice(start);
}
