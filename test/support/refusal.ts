import { ServiceError } from '../../src/shared/infra/errors';
import type { Parse } from '../../src/shared/domain/validation/text';

/** The error a field parser throws for `value` (as field "f"); fails the test if it accepts it. */
export function refusal<T>(parse: Parse<T>, value: unknown): ServiceError {
  try {
    parse('f', value);
  } catch (err) {
    if (err instanceof ServiceError) return err;
    throw err;
  }
  throw new Error(`accepted ${JSON.stringify(value)}`);
}

/** Refused with BAD_USER_INPUT naming the field (and, if given, a message matching `message`). */
export function expectRefused<T>(parse: Parse<T>, value: unknown, message?: RegExp): void {
  const err = refusal(parse, value);
  expect(err.code).toBe('BAD_USER_INPUT');
  expect(err.details).toEqual({ field: 'f' });
  expect(err.message).toMatch(/^f: /);
  if (message) expect(err.message).toMatch(message);
}
