import { expectRefused } from '../../support/refusal';
import {
  email,
  host,
  localDate,
  mobile,
  nonNegativeBigInt,
  nonNegativeInt,
  number,
  port,
  prefix,
  tag,
  tagList,
  text,
  uuid,
} from '../../../src/api/graphql/common/validate';

describe('field validators', () => {
  it('localDate: a date that exists; a month 13 or a day 32 is refused as bad input, not an internal error', () => {
    expect(localDate('f', '2024-02-29')).toBe('2024-02-29');
    for (const bad of ['2026-13-01', '2026-01-32', '2026-00-10', '2025-02-29', '2026-1-1', '2026-01-01T00:00:00Z', 20260101, null])
      expectRefused(localDate, bad);
  });

  it('tag: non-empty, no surrounding whitespace or control characters, at most 128 characters', () => {
    expect(tag('f', 'acc-1')).toBe('acc-1');
    expect(tag('f', 'a b')).toBe('a b');
    expect(tag('f', 'x'.repeat(128))).toHaveLength(128);
    for (const bad of ['', '   ', ' a', 'a ', 'a\nb', 'x'.repeat(129), 5]) expectRefused(tag, bad);
  });

  it('tagList: each a tag, no repeats, at most 100', () => {
    expect(tagList('f', ['a', 'b'])).toEqual(['a', 'b']);
    expect(tagList('f', [])).toEqual([]);
    for (const bad of [['a', 'a'], [''], 'a', Array.from({ length: 101 }, (_, i) => `t${i}`)]) expectRefused(tagList, bad);
  });

  it('email', () => {
    expect(email('f', 'ops@example.com')).toBe('ops@example.com');
    expect(email('f', 'first.last+tag@sub.example.co.uk')).toBe('first.last+tag@sub.example.co.uk');
    for (const bad of [
      'ops',
      'ops@',
      '@example.com',
      'ops@example',
      'a b@example.com',
      'ops@@example.com',
      `${'a'.repeat(250)}@example.com`,
    ])
      expectRefused(email, bad);
  });

  it('mobile', () => {
    for (const good of ['+44 20 7946 0958', '5551234', '(555) 123-4567', '+1.555.123.4567']) expect(mobile('f', good)).toBe(good);
    for (const bad of ['call me', '+', '12', '+44 20 7946 0958 ext', '--1']) expectRefused(mobile, bad);
  });

  it('host: hostname, IPv4 or IPv6', () => {
    for (const good of ['10.0.0.1', 'gw.example.com', 'localhost', '2001:db8::1', 'sip-1.example.net.']) expect(host('f', good)).toBe(good);
    for (const bad of ['', 'not a host', 'gw_1.example', '-gw.example', '[2001:db8::1]', '10.0.0.1:5060', `${'a'.repeat(64)}.example`])
      expectRefused(host, bad);
  });

  it('port: 1 to 65535', () => {
    expect(port('f', 1)).toBe(1);
    expect(port('f', 65535)).toBe(65535);
    for (const bad of [0, -1, 65536, 1.5, '5060']) expectRefused(port, bad);
  });

  it('non-negative numbers', () => {
    expect(nonNegativeInt('f', 0)).toBe(0);
    expectRefused(nonNegativeInt, -1);
    expect(nonNegativeBigInt('f', 0n)).toBe(0n);
    expectRefused(nonNegativeBigInt, -1n);
    expectRefused(nonNegativeBigInt, 1);
  });

  it('uuid', () => {
    expect(uuid('f', '5b0a3c1e-8a4d-4f6b-9c2a-1d3e5f7a9b0c')).toBe('5b0a3c1e-8a4d-4f6b-9c2a-1d3e5f7a9b0c');
    for (const bad of ['123', '5b0a3c1e8a4d4f6b9c2a1d3e5f7a9b0c', '5b0a3c1e-8a4d-4f6b-9c2a-1d3e5f7a9b0z']) expectRefused(uuid, bad);
  });

  it('prefix: may be empty (a catch-all), never contains whitespace', () => {
    expect(prefix('f', '')).toBe('');
    expect(prefix('f', '+4420')).toBe('+4420');
    for (const bad of ['44 20', '\t', 'x'.repeat(65)]) expectRefused(prefix, bad);
  });

  it('number (destination): names a number, as sent', () => {
    expect(number('f', '442071234567')).toBe('442071234567');
    expect(number('f', '44 20')).toBe('44 20');
    for (const bad of ['', '+', 'sip:@host']) expectRefused(number, bad);
  });

  it('text: bounded length', () => {
    expect(text(3)('f', 'abc')).toBe('abc');
    expectRefused(text(3), 'abcd');
  });
});
