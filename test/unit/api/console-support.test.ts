import { readAdjustment } from '../../../src/api/graphql/accounts/input';
import { alertLine } from '../../../src/api/store/dashboard';
import { transactionQuery } from '../../../src/api/store/transactions';
import { ServiceError } from '../../../src/shared/infra/errors';

function fieldOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof ServiceError) return err.details.field as string;
    throw err;
  }
  return undefined;
}

describe('adjustBalance arguments', () => {
  const base = { account_tag: 'acc', amount: 5n, reason: 'why' };

  it('trims the reason and leaves the key null when omitted or null', () => {
    expect(readAdjustment({ ...base, reason: '  top-up  ' })).toEqual({ account_tag: 'acc', amount: 5n, reason: 'top-up', key: null });
    expect(readAdjustment({ ...base, idempotency_key: null }).key).toBeNull();
    expect(readAdjustment({ ...base, idempotency_key: 'a.b_c:d-1' }).key).toBe('a.b_c:d-1');
  });

  it.each([
    [{ amount: 0n }, 'amount'],
    [{ amount: undefined }, 'amount'],
    [{ reason: '' }, 'reason'],
    [{ reason: ' \t ' }, 'reason'],
    [{ reason: 'x'.repeat(201) }, 'reason'],
    [{ idempotency_key: '1234567' }, 'idempotency_key'],
    [{ idempotency_key: 'x'.repeat(101) }, 'idempotency_key'],
    [{ idempotency_key: 'clé-unique-1' }, 'idempotency_key'],
    [{ idempotency_key: 'semi;colon1' }, 'idempotency_key'],
  ])('refuses %p naming %s', (override, field) => {
    expect(fieldOf(() => readAdjustment({ ...base, ...override }))).toBe(field);
  });

  it('accepts the bounds: a 200-character reason, 8- and 100-character keys', () => {
    expect(fieldOf(() => readAdjustment({ ...base, reason: 'x'.repeat(200), idempotency_key: '12345678' }))).toBeUndefined();
    expect(fieldOf(() => readAdjustment({ ...base, idempotency_key: 'k'.repeat(100) }))).toBeUndefined();
  });
});

describe('dashboard alert line', () => {
  // The two conditions of src/shared/domain/alerts/balance-alerts.ts: NEGATIVE_BALANCE and LOW_BALANCE.
  const alerts = (balance: bigint, threshold: bigint) => balance < 0n || (threshold > 0n && balance < threshold);

  it('is below exactly when a balance alert condition holds', () => {
    for (const threshold of [-100n, -1n, 0n, 1n, 50n]) {
      for (const balance of [-101n, -100n, -1n, 0n, 1n, 49n, 50n, 51n]) {
        expect([balance, threshold, balance < alertLine(threshold)]).toEqual([balance, threshold, alerts(balance, threshold)]);
      }
    }
  });
});

describe('transaction filter additions', () => {
  it('destination_prefix is an anchored regex with every metacharacter escaped', () => {
    expect(transactionQuery({ destination_prefix: '39.(06)*' })).toEqual({ destination: { $regex: '^39\\.\\(06\\)\\*' } });
    expect(transactionQuery({ destination_prefix: '' })).toEqual({});
    expect(fieldOf(() => transactionQuery({ destination_prefix: '1'.repeat(101) }))).toBe('destination_prefix');
  });

  it('timestamp_end bounds apply to timestamp_end', () => {
    const gte = new Date('2026-01-01T00:00:00Z');
    const lte = new Date('2026-01-02T00:00:00Z');
    expect(transactionQuery({ timestamp_end_gte: gte, timestamp_end_lte: lte })).toEqual({ timestamp_end: { $gte: gte, $lte: lte } });
  });
});
