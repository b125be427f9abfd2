import { isIP } from 'node:net';
import { badInput } from '../../../shared/errors';

/**
 * Field validators of the management API. Each takes the field name (for the error) and the value
 * GraphQL already coerced to the argument's type, checks what the type cannot express, and returns
 * the value to store or throws BAD_USER_INPUT naming the field.
 */
export type Parse<T> = (field: string, value: unknown) => T;

export const Limits = {
  TAG_LENGTH: 128,
  TEXT_LENGTH: 256,
  DESCRIPTION_LENGTH: 1024,
  PREFIX_LENGTH: 64,
  DESTINATION_LENGTH: 128,
  LIST_LENGTH: 100,
  EMAIL_LENGTH: 254,
  HOST_LENGTH: 253,
} as const;

// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;
const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;
const PHONE = /^\+?[0-9(][0-9 ().-]{1,30}[0-9]$/;
const HOSTNAME = /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NO_WHITESPACE = /^\S*$/;

function str(field: string, value: unknown): string {
  if (typeof value !== 'string') throw badInput(field, 'must be a string');
  return value;
}

/** Free text of at most `max` characters without control characters. */
export const text =
  (max: number = Limits.TEXT_LENGTH): Parse<string> =>
  (field, value) => {
    const s = str(field, value);
    if (s.length > max) throw badInput(field, `must be at most ${max} characters`);
    if (CONTROL_CHARACTERS.test(s)) throw badInput(field, 'must not contain control characters');
    return s;
  };

/** Identifiers chosen by operators: not blank, no surrounding spaces, sane length. */
export const tag: Parse<string> = (field, value) => {
  const s = text(Limits.TAG_LENGTH)(field, value);
  if (s.trim() === '') throw badInput(field, 'must not be empty');
  if (s.trim() !== s) throw badInput(field, 'must not start or end with whitespace');
  return s;
};

/** A list of tags: each valid, no repeats (order is meaningful, a repeat is a mistake). */
export const tagList: Parse<string[]> = (field, value) => {
  if (!Array.isArray(value)) throw badInput(field, 'must be a list');
  if (value.length > Limits.LIST_LENGTH) throw badInput(field, `must have at most ${Limits.LIST_LENGTH} entries`);
  const tags = value.map((v) => tag(field, v));
  const repeated = tags.find((t, i) => tags.indexOf(t) !== i);
  if (repeated !== undefined) throw badInput(field, `lists "${repeated}" more than once`);
  return tags;
};

export const email: Parse<string> = (field, value) => {
  const s = str(field, value);
  if (s.length > Limits.EMAIL_LENGTH || !EMAIL.test(s)) throw badInput(field, 'must be an e-mail address like name@example.com');
  return s;
};

export const phone: Parse<string> = (field, value) => {
  const s = str(field, value);
  if (!PHONE.test(s) || s.replace(/\D/g, '').length < 3) {
    throw badInput(field, 'must be a phone number: digits, optionally a leading "+", spaces, dots, dashes or parentheses');
  }
  return s;
};

/** A hostname or an IPv4/IPv6 address (without brackets or port). */
export const host: Parse<string> = (field, value) => {
  const s = str(field, value);
  if (s.length > Limits.HOST_LENGTH || (isIP(s) === 0 && !HOSTNAME.test(s))) {
    throw badInput(field, 'must be a hostname or an IP address');
  }
  return s;
};

export const intBetween =
  (min: number, max: number): Parse<number> =>
  (field, value) => {
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw badInput(field, 'must be an integer');
    if (value < min || value > max) throw badInput(field, `must be from ${min} to ${max}`);
    return value;
  };

export const port: Parse<number> = intBetween(1, 65535);

export const nonNegativeInt: Parse<number> = (field, value) => {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw badInput(field, 'must be an integer');
  if (value < 0) throw badInput(field, 'must not be negative');
  return value;
};

export const bigInt: Parse<bigint> = (field, value) => {
  if (typeof value !== 'bigint') throw badInput(field, 'must be an integer');
  return value;
};

export const nonNegativeBigInt: Parse<bigint> = (field, value) => {
  const n = bigInt(field, value);
  if (n < 0n) throw badInput(field, 'must not be negative');
  return n;
};

export const bool: Parse<boolean> = (field, value) => {
  if (typeof value !== 'boolean') throw badInput(field, 'must be true or false');
  return value;
};

export const dateTime: Parse<Date> = (field, value) => {
  if (!(value instanceof Date) || !Number.isFinite(value.getTime())) throw badInput(field, 'must be a datetime');
  return value;
};

export const oneOf =
  <T extends string>(allowed: readonly T[]): Parse<T> =>
  (field, value) => {
    if (!(allowed as readonly unknown[]).includes(value)) throw badInput(field, `must be one of ${allowed.join(', ')}`);
    return value as T;
  };

/** Ids are UUID strings (any version; generated ones are uuid4). */
export const uuid: Parse<string> = (field, value) => {
  const s = str(field, value);
  if (!UUID.test(s)) throw badInput(field, 'must be a UUID like 9b2f3c1e-8a4d-4f6b-9c2a-1d3e5f7a9b0c');
  return s;
};

/**
 * A destination prefix. Empty is allowed: it matches every destination (a catch-all rate that any
 * longer prefix overrides).
 */
export const prefix: Parse<string> = (field, value) => {
  const s = text(Limits.PREFIX_LENGTH)(field, value);
  if (!NO_WHITESPACE.test(s)) throw badInput(field, 'must not contain whitespace');
  return s;
};

/** A called number or address to rate. */
export const destination: Parse<string> = (field, value) => {
  const s = text(Limits.DESTINATION_LENGTH)(field, value);
  if (s === '' || !NO_WHITESPACE.test(s)) throw badInput(field, 'must be a non-empty destination without whitespace');
  return s;
};
