import { GraphQLScalarType, Kind, type ValueNode } from 'graphql';
import { ErrorCodes, ServiceError } from '../infra/errors';
import type { SchemaModule } from '../infra/http/graphql';
import { parseDateTime } from './validation/datetime';

/**
 * The scalars both GraphQL endpoints share. A value they refuse raises a BAD_USER_INPUT
 * ServiceError without a field: the GraphQL error formatter names the argument it came from.
 */

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const INTEGER_TEXT = /^-?\d+$/;

const invalid = (message: string) => new ServiceError(ErrorCodes.BAD_USER_INPUT, message);

/**
 * A stored value the scalar cannot represent is a fault of the service, not of the request:
 * answered as INTERNAL_ERROR rather than BAD_USER_INPUT.
 */
function serializeWith<T, R>(name: string, read: (value: unknown) => T, write: (value: T) => R): (value: unknown) => R {
  return (value) => {
    let parsed: T;
    try {
      parsed = read(value);
    } catch {
      throw new TypeError(`${name} cannot represent ${JSON.stringify(String(value))}`);
    }
    return write(parsed);
  };
}

function toInt64(value: unknown): bigint {
  let result: bigint;
  if (typeof value === 'bigint') result = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) result = BigInt(value);
  // Not trimmed: " 1" is refused like any padded value (src/shared/domain/validation/text.ts).
  else if (typeof value === 'string' && INTEGER_TEXT.test(value)) result = BigInt(value);
  else throw invalid(`must be an integer (a JSON number or a decimal string), got ${JSON.stringify(String(value))}`);
  if (result < INT64_MIN || result > INT64_MAX) throw invalid('must fit in a signed 64-bit integer');
  return result;
}

/**
 * 64-bit integers end to end (balances, fees). Answers a JSON number while the value is exactly
 * representable as one, otherwise a decimal string, so JavaScript clients never round money.
 * Accepts an integer literal or number, or a decimal string.
 */
export const BigIntScalar = new GraphQLScalarType<bigint, number | string>({
  name: 'BigInt',
  description:
    'Signed 64-bit integer. Output: a JSON number when within ±(2^53-1), otherwise a decimal string. Input: an integer or a decimal string.',
  serialize: serializeWith('BigInt', toInt64, (n) => (n >= -MAX_SAFE && n <= MAX_SAFE ? Number(n) : n.toString())),
  parseValue: toInt64,
  parseLiteral: (ast: ValueNode) => {
    if (ast.kind === Kind.INT || ast.kind === Kind.STRING) return toInt64(ast.value);
    throw invalid('must be an integer or a decimal string');
  },
});

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `YYYY-MM-DDTHH:MM:SSZ`, with milliseconds only when there are some. */
export function formatDateTime(date: Date): string {
  const base =
    `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}` +
    `T${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`;
  const ms = date.getUTCMilliseconds();
  return ms === 0 ? `${base}Z` : `${base}.${pad(ms, 3)}Z`;
}

function toDate(value: unknown): Date {
  if (value instanceof Date && Number.isFinite(value.getTime())) return value;
  if (typeof value === 'string') {
    const parsed = parseDateTime(value);
    if (parsed) return parsed;
  }
  throw invalid(
    `must be a datetime YYYY-MM-DDTHH:MM:SS (optionally with fractional seconds and a trailing Z; always UTC), got ${JSON.stringify(String(value))}`,
  );
}

export const DateTimeScalar = new GraphQLScalarType<Date, string>({
  name: 'DateTime',
  description:
    'UTC date and time. Input: YYYY-MM-DDTHH:MM:SS with optional fractional seconds and an optional trailing Z. Output: ISO 8601 with Z.',
  serialize: serializeWith('DateTime', toDate, formatDateTime),
  parseValue: toDate,
  parseLiteral: (ast: ValueNode) => {
    if (ast.kind === Kind.STRING) return toDate(ast.value);
    throw invalid('must be a datetime string');
  },
});

export const scalarsModule: SchemaModule = {
  typeDefs: /* GraphQL */ `
    scalar BigInt
    scalar DateTime
  `,
  resolvers: { BigInt: BigIntScalar, DateTime: DateTimeScalar },
};
