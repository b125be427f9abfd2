import { badInput } from '../../../shared/infra/errors';
import type { Parse } from '../../../shared/domain/validation/text';
import { isTimeZone, normalizeTiming, timingProblem } from '../../../shared/domain/rating';
import type { RateTiming } from '../../../shared/domain/types';

/**
 * Field validators of the management API. Each takes the field name (for the error) and the value
 * GraphQL already coerced to the argument's type, checks what the type cannot express, and returns
 * the value to store or throws BAD_USER_INPUT naming the field.
 *
 * Text fields use the kinds of src/shared/domain/validation/text.ts, the same functions the agent and the
 * CDR import use, so a field accepts the same values on every surface.
 */
export {
  address,
  email,
  host,
  lookup,
  mobile,
  number,
  prefix,
  tag,
  tagList,
  text,
  TextLimits,
  type Parse,
} from '../../../shared/domain/validation/text';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
  if (typeof value !== 'string') throw badInput(field, 'must be a string');
  if (!UUID.test(value)) throw badInput(field, 'must be a UUID like 9b2f3c1e-8a4d-4f6b-9c2a-1d3e5f7a9b0c');
  return value;
};

/** An IANA time zone name the runtime knows (`Europe/Berlin`), the clock of a pricelist's rate timings. */
export const timeZone: Parse<string> = (field, value) => {
  if (typeof value !== 'string' || value.length > 64 || !isTimeZone(value)) {
    throw badInput(field, 'must be an IANA time zone name, e.g. Europe/Berlin or UTC');
  }
  return value;
};

/** A calendar date `YYYY-MM-DD` that exists. */
export const localDate: Parse<string> = (field, value) => {
  // An impossible month or day makes an invalid Date (whose toISOString throws); 02-30 rolls over to March.
  const at = typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) ? new Date(`${value}T00:00:00Z`) : null;
  const ok = at !== null && Number.isFinite(at.getTime()) && at.toISOString().startsWith(value as string);
  if (!ok) throw badInput(field, 'must be a date YYYY-MM-DD');
  return value as string;
};

/** A rate timing (docs/RATING.md): checked, days sorted; one that says nothing (every day, all day) is refused. */
export const rateTiming: Parse<RateTiming> = (field, value) => {
  const v = value as Partial<Record<keyof RateTiming, unknown>>;
  const timing: RateTiming = {
    days: (v.days as number[] | null | undefined) ?? null,
    start: (v.start as string | null | undefined) ?? null,
    end: (v.end as string | null | undefined) ?? null,
    holidays: (v.holidays as RateTiming['holidays'] | undefined) ?? null,
  };
  const problem = timingProblem(timing);
  if (problem) throw badInput(`${field}.${problem.split(':')[0]}`, problem.slice(problem.indexOf(':') + 1).trim());
  const normalized = normalizeTiming(timing);
  if (!normalized) throw badInput(field, 'says nothing (every day, all day): give null for a rate without a timing');
  return normalized;
};
