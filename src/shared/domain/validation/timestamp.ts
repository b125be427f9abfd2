import { badInput } from '../../infra/errors';
import { parseDateTime } from './datetime';
import type { Parse } from './text';

/**
 * The agent's timestamps: the spec's datetime (`2026-01-31T12:00:00`, optional fraction and `Z`), or
 * epoch seconds as SIP proxies print them: Kamailio's `$TV(Sn)` is `%lu.%06lu`, OpenSIPS' `$Ts` an
 * integer. Epoch seconds may come as a JSON number or as a decimal string with up to 6 fraction digits.
 */

/** Longer than any datetime or epoch string: refused before parsing. */
export const MAX_TIMESTAMP_LENGTH = 64;

/**
 * Epoch seconds accepted: years 2000 to 2100. Outside that a number is a unit mistake (milliseconds or
 * microseconds sent as seconds land thousands of years ahead) or a proxy's unset clock, not a call.
 * Datetimes are held to the same years.
 */
export const EPOCH_MIN_SECONDS = Date.UTC(2000, 0, 1) / 1000;
export const EPOCH_MAX_SECONDS = Date.UTC(2101, 0, 1) / 1000 - 1;

const EPOCH = /^(\d{1,15})(?:\.(\d{1,6}))?$/;

const FORMS = 'a datetime like 2026-01-31T12:00:00Z or epoch seconds like 1763912345.123456 (at most 6 decimals)';
const RANGE = `epoch seconds must be between ${EPOCH_MIN_SECONDS} (2000-01-01) and ${EPOCH_MAX_SECONDS} (2100-12-31)`;

/**
 * Epoch seconds in decimal digits to epoch milliseconds, rounded half up, by integer arithmetic on the
 * digits rather than through a binary fraction: exact by construction, so a call billed per second
 * from two such stamps is never a second longer than the proxy measured.
 */
function epochDigitsToMs(whole: string, fraction: string): number {
  const digits = fraction.padEnd(4, '0');
  const ms = Number(digits.slice(0, 3)) + (Number(digits[3]) >= 5 ? 1 : 0);
  return Number(whole) * 1000 + ms;
}

/** The instant, or BAD_USER_INPUT saying `range` when it falls outside the years 2000 to 2100. */
function inRange(field: string, ms: number, range = RANGE): Date {
  if (ms < EPOCH_MIN_SECONDS * 1000 || ms > EPOCH_MAX_SECONDS * 1000 + 999) throw badInput(field, range);
  return new Date(ms);
}

/** One timestamp field: a Date, or BAD_USER_INPUT naming the field. */
export const timestamp: Parse<Date> = (field, value) => {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw badInput(field, `must be ${FORMS}`);
    // A JSON number is already a binary float: rounding to the millisecond is as exact as it gets.
    return inRange(field, Math.round(value * 1000));
  }
  if (typeof value !== 'string') throw badInput(field, `must be a string or a number: ${FORMS}`);
  if (value.length > MAX_TIMESTAMP_LENGTH) throw badInput(field, `must be at most ${MAX_TIMESTAMP_LENGTH} characters`);
  const epoch = EPOCH.exec(value);
  if (epoch) return inRange(field, epochDigitsToMs(epoch[1], epoch[2] ?? ''));
  const parsed = parseDateTime(value);
  if (!parsed) throw badInput(field, `must be ${FORMS}`);
  // The epoch bounds, for the same reason: a mistyped year is not a call.
  return inRange(field, parsed.getTime(), 'must be a time from 2000-01-01 to 2100-12-31 (UTC)');
};
