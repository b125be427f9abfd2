import { Kind } from 'graphql';
import { ServiceError } from '../../../src/shared/infra/errors';
import { BigIntScalar, DateTimeScalar, formatDateTime } from '../../../src/shared/domain/graphql-scalars';

describe('BigInt scalar', () => {
  it('answers a JSON number within the safe range and a decimal string beyond it', () => {
    expect(BigIntScalar.serialize(20n)).toBe(20);
    expect(BigIntScalar.serialize(-9007199254740991n)).toBe(-9007199254740991);
    expect(BigIntScalar.serialize(9007199254740992n)).toBe('9007199254740992');
    expect(BigIntScalar.serialize(-(2n ** 63n))).toBe('-9223372036854775808');
    expect(BigIntScalar.serialize(7)).toBe(7);
  });

  it('treats an unrepresentable stored value as a service fault, not bad input', () => {
    expect(() => BigIntScalar.serialize('abc')).toThrow(TypeError);
    expect(() => BigIntScalar.serialize(2n ** 63n)).toThrow(TypeError);
  });

  it('reads integers and decimal strings within 64 bits', () => {
    expect(BigIntScalar.parseValue(5)).toBe(5n);
    expect(BigIntScalar.parseValue('-9223372036854775808')).toBe(-(2n ** 63n));
    expect(BigIntScalar.parseLiteral({ kind: Kind.INT, value: '9223372036854775807' })).toBe(2n ** 63n - 1n);
    expect(BigIntScalar.parseLiteral({ kind: Kind.STRING, value: '12' })).toBe(12n);
  });

  it.each([1.5, '1.5', '', 'abc', '9223372036854775808', true, null, ' 1', '1 ', '\ufeff1', '1\n'])(
    'refuses %p with BAD_USER_INPUT',
    (value) => {
      expect(() => BigIntScalar.parseValue(value)).toThrow(ServiceError);
    },
  );

  it('refuses float literals', () => {
    expect(() => BigIntScalar.parseLiteral({ kind: Kind.FLOAT, value: '1.0' })).toThrow(ServiceError);
  });
});

describe('DateTime scalar', () => {
  it('reads YYYY-MM-DDTHH:MM:SS with or without Z as UTC, fractional seconds allowed', () => {
    expect(DateTimeScalar.parseValue('2024-03-01T10:00:00')).toEqual(new Date(Date.UTC(2024, 2, 1, 10)));
    expect(DateTimeScalar.parseValue('2024-03-01T10:00:00Z')).toEqual(new Date(Date.UTC(2024, 2, 1, 10)));
    expect(DateTimeScalar.parseValue('2024-03-01T10:00:00.250Z')).toEqual(new Date(Date.UTC(2024, 2, 1, 10, 0, 0, 250)));
    expect(DateTimeScalar.parseLiteral({ kind: Kind.STRING, value: '2024-02-29T23:59:59' })).toEqual(
      new Date(Date.UTC(2024, 1, 29, 23, 59, 59)),
    );
  });

  it.each([
    '2024-03-01',
    '2024-03-01 10:00:00',
    '2023-02-29T00:00:00',
    '2024-13-01T00:00:00',
    '2024-03-01T24:00:00',
    '2024-03-01T10:00:00+02:00',
    'now',
    ' 2024-03-01T10:00:00',
    '2024-03-01T10:00:00Z\n',
    '\ufeff2024-03-01T10:00:00',
    '2024-03-01T10:00:00\t',
  ])('refuses %p with BAD_USER_INPUT', (value) => {
    expect(() => DateTimeScalar.parseValue(value)).toThrow(ServiceError);
  });

  it('answers ISO 8601 in UTC with Z, milliseconds only when present', () => {
    expect(DateTimeScalar.serialize(new Date(Date.UTC(2024, 2, 1, 10)))).toBe('2024-03-01T10:00:00Z');
    expect(formatDateTime(new Date(Date.UTC(2024, 2, 1, 10, 0, 0, 5)))).toBe('2024-03-01T10:00:00.005Z');
    expect(formatDateTime(new Date(Date.UTC(999, 0, 1)))).toBe('0999-01-01T00:00:00Z');
    expect(() => DateTimeScalar.serialize(new Date(NaN))).toThrow(TypeError);
  });
});
