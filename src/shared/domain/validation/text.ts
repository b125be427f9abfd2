import { isIP } from 'node:net';
import { badInput } from '../../infra/errors';
import { ratingNumber } from '../numbers/uri';

/**
 * What text fields accept: one definition per kind of field, used by every surface (the management
 * API, the agent's GraphQL and REST operations, recordTransactions items and CDR import lines), so a
 * field accepts the same values wherever it arrives. Documented in docs/API.md ("What text fields
 * accept"); docs/AGENT.md points there.
 *
 * Every kind refuses, rather than repairs:
 * - control characters: C0 (U+0000-U+001F), DEL and C1 (U+0080-U+009F), plus the Unicode line and
 *   paragraph separators (U+2028, U+2029). No tag, number, address or name contains them; CR LF and
 *   ESC would split or rewrite log lines, CSV reject files and terminals.
 * - lone surrogates. JSON.parse turns `"\ud800"` into one, and UTF-8 (BSON, logs) cannot encode it:
 *   the MongoDB driver would silently store U+FFFD, i.e. something other than what was sent.
 * - leading or trailing whitespace (JS `trim()`: Unicode White_Space and U+FEFF). Refused, not
 *   trimmed: a value stored other than sent is silent corruption, and for keys (" alice" vs
 *   "alice") it would make two names collide.
 * Lengths count characters (Unicode code points), not UTF-16 units or bytes.
 */

/** Checks one field: returns the value to store or throws BAD_USER_INPUT naming the field. */
export type Parse<T> = (field: string, value: unknown) => T;

export const TextLimits = {
  TAG: 128,
  TAG_LIST: 100,
  TEXT: 256,
  DESCRIPTION: 1024,
  // Room for the SIP/TEL URIs proxies send (docs/DESIGN.md section 4): display name, host, parameters.
  NUMBER: 256,
  PREFIX: 64,
  HOST: 253,
  EMAIL: 254,
} as const;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
// Without the `u` flag a regex sees UTF-16 units, which is what finding an unpaired half needs.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const WHITESPACE = /\s/;
// An address as mail servers take it, not as RFC 5322 allows in headers: the local part's atoms
// (letters, digits and ! # $ % & ' * + / = ? ^ _ ` { | } ~ -, dot-separated), a domain of labels.
// Display forms (`<a@b.c>`, `"Name" <a@b.c>`) and quoted local parts are refused.
const EMAIL =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$/;
const MOBILE = /^\+?[0-9(][0-9 ().-]{1,30}[0-9]$/;
const HOSTNAME = /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;
const PORT = /^[0-9]{1,5}$/;

/** Code points, counted only when UTF-16 units exceed the limit (code points never exceed units). */
function longerThan(s: string, max: number): boolean {
  if (s.length <= max) return false;
  if (s.length > 2 * max) return true;
  let count = 0;
  for (let i = 0; i < s.length; i++) {
    const unit = s.charCodeAt(i);
    // A high surrogate followed by a low one is one character.
    if (unit >= 0xd800 && unit <= 0xdbff && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
    if (++count > max) return true;
  }
  return false;
}

/** Ill-formed Unicode (an unpaired surrogate): such a string cannot be stored as sent. */
export function hasLoneSurrogate(s: string): boolean {
  return LONE_SURROGATE.test(s);
}

/**
 * The rules every kind shares, as the problem found (null: none). The length is checked first, so
 * the other checks never scan an oversized string.
 */
export function textProblem(s: string, min: number, max: number): string | null {
  if (longerThan(s, max)) return `must be at most ${max} characters`;
  if (s.length === 0 && min > 0) return 'must not be empty';
  if (hasLoneSurrogate(s)) return 'must be well-formed Unicode (it holds a lone surrogate)';
  if (CONTROL.test(s)) return 'must not contain control characters or line breaks';
  if (s.trim() !== s) return 'must not start or end with whitespace';
  return null;
}

function str(field: string, value: unknown): string {
  if (typeof value !== 'string') throw badInput(field, 'must be a string');
  return value;
}

function checked(field: string, value: unknown, min: number, max: number): string {
  const s = str(field, value);
  const problem = textProblem(s, min, max);
  if (problem) throw badInput(field, problem);
  return s;
}

/** Free text (names, descriptions, reasons): 0 to `max` characters; inner spaces allowed. */
export const text =
  (max: number = TextLimits.TEXT): Parse<string> =>
  (field, value) =>
    checked(field, value, 0, max);

/** Identifiers chosen by operators and switches (account_tag, transaction_tag, carrier_tag, ...): 1-128 characters. */
export const tag: Parse<string> = (field, value) => checked(field, value, 1, TextLimits.TAG);

/** A list of tags: at most 100, each a tag, no repeats (order is meaningful, a repeat is a mistake). */
export const tagList: Parse<string[]> = (field, value) => {
  if (!Array.isArray(value)) throw badInput(field, 'must be a list');
  if (value.length > TextLimits.TAG_LIST) throw badInput(field, `must have at most ${TextLimits.TAG_LIST} entries`);
  const tags = value.map((v, i) => {
    if (typeof v !== 'string') throw badInput(field, `entry ${i} must be a string`);
    const problem = textProblem(v, 1, TextLimits.TAG);
    if (problem) throw badInput(field, `entry ${i} ${problem}`);
    return v;
  });
  const repeated = tags.find((t, i) => tags.indexOf(t) !== i);
  if (repeated !== undefined) throw badInput(field, `lists "${repeated}" more than once`);
  return tags;
};

/**
 * A calling or called number (source, destination): 1-256 characters, as a plain number
 * (`+39 06 1234`, `(020) 555.0100`) or a SIP/TEL URI in any form a proxy sends
 * (`"Alice" <sip:+39 06 1234@host;user=phone>`, `tel:+3906;phone-context=example.com`), stored as
 * sent. Inner spaces are allowed because they are visual separators; what is refused is a value
 * rating could not use: one naming no number at all (`sip:@host`, `+`), or whose number keeps other
 * whitespace (a no-break space), which would silently match no prefix.
 */
export const number: Parse<string> = (field, value) => {
  const s = checked(field, value, 1, TextLimits.NUMBER);
  const rated = ratingNumber(s);
  if (rated === '') throw badInput(field, 'must name a number: digits, or a sip:, sips: or tel: URI with a user part');
  if (WHITESPACE.test(rated)) throw badInput(field, 'must not contain whitespace other than spaces in its number');
  return s;
};

/** A destination prefix: 0-64 characters without whitespace; empty is a catch-all rate. */
export const prefix: Parse<string> = (field, value) => {
  const s = checked(field, value, 0, TextLimits.PREFIX);
  if (WHITESPACE.test(s)) throw badInput(field, 'must not contain whitespace');
  return s;
};

function isHost(s: string): boolean {
  // isIP accepts IPv6 zone ids (`fe80::1%eth0`): the shared rules keep controls out of those too.
  return textProblem(s, 1, TextLimits.HOST) === null && (isIP(s) !== 0 || HOSTNAME.test(s));
}

/** A carrier's host: a hostname or an IPv4/IPv6 address (without brackets or port). */
export const host: Parse<string> = (field, value) => {
  const s = str(field, value);
  if (!isHost(s)) throw badInput(field, 'must be a hostname or an IP address');
  return s;
};

/** `host`, `host:port`, `[IPv6]`, `[IPv6]:port` or a bare IPv6 address; null when it is none of them. */
function splitAddress(s: string): { host: string; port: string | null } | null {
  if (isIP(s) === 6) return { host: s, port: null };
  const m = /^\[([^\]]*)\](?::(.*))?$/.exec(s) ?? /^([^:[\]]*)(?::(.*))?$/.exec(s);
  if (!m) return null;
  const bracketed = s.startsWith('[');
  if (bracketed && isIP(m[1]) !== 6) return null;
  return { host: m[1], port: m[2] ?? null };
}

/**
 * A network address (source_ip, carrier_ip): a hostname or IP address, optionally with a port
 * (`10.0.0.1`, `10.0.0.1:5060`, `gw.example.net:5060`, `2001:db8::1`, `[2001:db8::1]:5060`), as a
 * switch reports it and as carriers are matched (`host` or `host:port`).
 */
export const address: Parse<string> = (field, value) => {
  const s = str(field, value);
  const parts = s.length <= TextLimits.HOST + 8 ? splitAddress(s) : null;
  const portOk = parts?.port == null || (PORT.test(parts.port) && Number(parts.port) >= 1 && Number(parts.port) <= 65535);
  if (!parts || !isHost(parts.host) || !portOk) {
    throw badInput(field, 'must be a hostname or an IP address, optionally with a port (10.0.0.1:5060, [2001:db8::1]:5060)');
  }
  return s;
};

/** An e-mail address: `name@domain.tld`, at most 254 characters, no whitespace. */
export const email: Parse<string> = (field, value) => {
  const s = str(field, value);
  if (textProblem(s, 1, TextLimits.EMAIL) !== null || !EMAIL.test(s))
    throw badInput(field, 'must be an e-mail address like name@example.com');
  return s;
};

/** A mobile number an SMS gateway can dial: digits, an optional leading "+", spaces, dots, dashes, parentheses. */
export const mobile: Parse<string> = (field, value) => {
  const s = str(field, value);
  if (!MOBILE.test(s) || s.replace(/\D/g, '').length < 3) {
    throw badInput(field, 'must be a phone number: digits, optionally a leading "+", spaces, dots, dashes or parentheses');
  }
  return s;
};

/**
 * A value that only names a record (a lookup): not checked against its kind, so records stored
 * before these rules stay reachable, but refused when ill-formed, because it would be stored or
 * matched as U+FFFD, i.e. name a record it does not spell.
 */
export const lookup: Parse<string> = (field, value) => {
  const s = str(field, value);
  if (hasLoneSurrogate(s)) throw badInput(field, 'must be well-formed Unicode (it holds a lone surrogate)');
  return s;
};
