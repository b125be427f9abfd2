import fc from 'fast-check';
import { EPOCH_MAX_SECONDS, EPOCH_MIN_SECONDS, timestamp } from '../../../src/shared/domain/validation/timestamp';
import { validate } from '../../../src/agent/operations';
import { expectRefused } from '../../support/refusal';

const ms = (value: unknown) => timestamp('f', value).getTime();

describe('agent timestamps: datetimes and epoch seconds', () => {
  it('keeps accepting the datetimes it accepted', () => {
    expect(ms('2026-11-23T15:39:05Z')).toBe(Date.UTC(2026, 10, 23, 15, 39, 5));
    expect(ms('2026-11-23T15:39:05.25')).toBe(Date.UTC(2026, 10, 23, 15, 39, 5, 250));
  });

  it("reads Kamailio's $TV(Sn) (%lu.%06lu) exactly, to the millisecond", () => {
    expect(ms('1763912345.123456')).toBe(1763912345123);
    expect(ms('1763912345.000000')).toBe(1763912345000);
    expect(ms('1763912345')).toBe(1763912345000);
    expect(ms('1763912345.5')).toBe(1763912345500);
    expect(ms('1763912345.001')).toBe(1763912345001);
  });

  it('rounds sub-millisecond digits half up, so the string and the number of one instant agree', () => {
    expect(ms('1763912345.123499')).toBe(1763912345123);
    expect(ms('1763912345.123500')).toBe(1763912345124);
    expect(ms('1763912345.999999')).toBe(1763912346000);
    expect(ms(1763912345.123456)).toBe(1763912345123);
    expect(ms(1763912345)).toBe(1763912345000);
  });

  it('is exact where float arithmetic is not (a 5.000 s call is 5000 ms, not 4999.99 or 5000.01)', () => {
    expect(ms('1763912345.123')).toBe(1763912345123);
    fc.assert(
      fc.property(
        fc.integer({ min: EPOCH_MIN_SECONDS, max: EPOCH_MAX_SECONDS - 10 }),
        fc.integer({ min: 0, max: 999_999 }),
        fc.integer({ min: 0, max: 9 }),
        (seconds, micros, length) => {
          const fraction = String(micros).padStart(6, '0');
          const begin = ms(`${seconds}.${fraction}`);
          const end = ms(`${seconds + length}.${fraction}`);
          expect(end - begin).toBe(length * 1000);
          expect(begin).toBe(seconds * 1000 + Math.round(micros / 1000));
        },
      ),
    );
  });

  it('agrees with Date for every millisecond string', () => {
    fc.assert(
      fc.property(fc.integer({ min: EPOCH_MIN_SECONDS * 1000, max: EPOCH_MAX_SECONDS * 1000 + 999 }), (instant) => {
        const text = `${Math.floor(instant / 1000)}.${String(instant % 1000).padStart(3, '0')}`;
        expect(ms(text)).toBe(instant);
        expect(ms(new Date(instant).toISOString())).toBe(instant);
      }),
    );
  });

  it('accepts years 2000 to 2100 only, naming the field', () => {
    expect(ms(String(EPOCH_MIN_SECONDS))).toBe(Date.UTC(2000, 0, 1));
    expect(ms(`${EPOCH_MAX_SECONDS}.999`)).toBe(Date.UTC(2101, 0, 1) - 1);
    expectRefused(timestamp, `${EPOCH_MAX_SECONDS}.999999`); // rounds up into 2101
    for (const value of [
      String(EPOCH_MIN_SECONDS - 1),
      String(EPOCH_MAX_SECONDS + 1),
      '1763912345123',
      1763912345123,
      0,
      -1,
      '0',
      946684799.9,
    ]) {
      expectRefused(timestamp, value, /between 946684800 \(2000-01-01\) and 4133980799 \(2100-12-31\)/);
    }
  });

  // The same bounds in either form: a datetime's year mistyped (9999, 1800) would bill centuries.
  it('holds datetimes to years 2000 to 2100 too', () => {
    expect(ms('2000-01-01T00:00:00Z')).toBe(Date.UTC(2000, 0, 1));
    expect(ms('2100-12-31T23:59:59.999Z')).toBe(Date.UTC(2101, 0, 1) - 1);
    for (const value of ['1999-12-31T23:59:59Z', '2101-01-01T00:00:00Z', '9999-12-31T23:59:59', '1800-01-01T00:00:00'])
      expectRefused(timestamp, value, /from 2000-01-01 to 2100-12-31/);
  });

  it('refuses other forms, naming the field', () => {
    for (const value of [
      '1763912345.1234567',
      '1763912345.',
      '.5',
      '+1763912345',
      '-1763912345',
      '1763912345,5',
      ' 1763912345',
      '1763912345 ',
      '1e9',
      '0x6923',
      '',
      'now',
      NaN,
      Infinity,
      true,
      {},
      [],
      '9'.repeat(65),
    ]) {
      expectRefused(timestamp, value);
    }
  });
});

describe('agent operations take epoch timestamps', () => {
  const now = new Date('2026-11-23T00:00:00Z');
  const call = { transaction_tag: 't', account_tag: 'a', source: '1', destination: '39' };

  it('record, begin and end convert them to the ISO the jobs carry', () => {
    const job = validate.record(
      { ...call, timestamp_auth: 1763912340, timestamp_begin: '1763912345.000000', timestamp_end: '1763912350.000000' },
      now,
      0,
    );
    expect(job).toMatchObject({
      timestamp_auth: '2025-11-23T15:39:00.000Z',
      timestamp_begin: '2025-11-23T15:39:05.000Z',
      timestamp_end: '2025-11-23T15:39:10.000Z',
    });
    expect(validate.begin({ ...call, timestamp_begin: 1763912345.5 }, now, 0).timestamp_begin).toBe('2025-11-23T15:39:05.500Z');
    expect(validate.end({ ...call, timestamp_end: '1763912345.123456' }, now, 0).timestamp_end).toBe('2025-11-23T15:39:05.123Z');
  });

  it('an absent or empty optional timestamp is the default: now for begin and end, null for auth', () => {
    expect(validate.begin({ ...call, timestamp_auth: '', timestamp_begin: '' }, now, 0)).toMatchObject({
      timestamp_auth: null,
      timestamp_begin: now.toISOString(),
    });
    expect(validate.end({ ...call, timestamp_end: null }, now, 0).timestamp_end).toBe(now.toISOString());
  });

  it('a bad one is BAD_USER_INPUT naming it', () => {
    for (const field of ['timestamp_auth', 'timestamp_begin', 'timestamp_end']) {
      expect(() =>
        validate.record({ ...call, timestamp_begin: '1763912345', timestamp_end: '1763912350', [field]: '99999999999' }, now, 0),
      ).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT', details: { field } }));
    }
  });
});
