import { useRecordContext, type FieldProps } from 'react-admin';
import { Typography } from '@mui/material';

/**
 * BigInt values arrive as JSON numbers, or as decimal strings past 2^53. Shown as integers of minor
 * currency units with digit grouping; the pricelists say which currency.
 */
export function formatMinorUnits(value: unknown): string {
  if (value === null || value === undefined || value === '') return '';
  const text = String(value);
  if (!/^-?\d+$/.test(text)) return text;
  try {
    return BigInt(text).toLocaleString('en-US');
  } catch {
    return text;
  }
}

/** Number for charts and comparisons (precision beyond 2^53 does not matter there). */
export const toNumber = (value: unknown): number => {
  const n = Number(value);
  return Number.isFinite(n) ? n : 0;
};

const get = (record: object, path: string): unknown =>
  path
    .split('.')
    .reduce<unknown>(
      (value, key) => (value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined),
      record,
    );

/** A BigInt field in minor units; `inherit` takes the surrounding typography (large figures). */
export function MinorUnitsField({ source, testId, inherit, ...rest }: FieldProps & { source: string; testId?: string; inherit?: boolean }) {
  const record = useRecordContext();
  const value: unknown = record ? get(record, source) : undefined;
  const negative = typeof value === 'string' ? value.startsWith('-') : toNumber(value) < 0;
  return (
    <Typography
      component="span"
      variant={inherit ? 'inherit' : 'body2'}
      data-testid={testId}
      sx={{ color: negative ? 'error.main' : undefined, fontVariantNumeric: 'tabular-nums' }}
      className={rest.className}
    >
      {formatMinorUnits(value)}
    </Typography>
  );
}

/** Validator for BigInt text inputs: an optional sign and digits. */
export const integerText = (value: unknown) =>
  value === null || value === undefined || value === '' || /^-?\d+$/.test(String(value).trim())
    ? undefined
    : 'Must be a whole number of minor units';

/** Validator for BigInt text inputs that take no negative amount (spend limits): digits only. */
export const nonNegativeIntegerText = (value: unknown) =>
  value === null || value === undefined || value === '' || /^\d+$/.test(String(value).trim())
    ? undefined
    : 'Must be a whole, non-negative number of minor units';

/** parse for BigInt text inputs: trimmed text (the API accepts decimal strings), '' as null. */
export const parseIntegerText = (value: string) => (value.trim() === '' ? null : value.trim());

/** A fresh idempotency key; crypto.randomUUID needs a secure context (https or localhost). */
export function newIdempotencyKey(): string {
  if (typeof crypto.randomUUID === 'function' && window.isSecureContext) return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** `YYYY-MM-DD HH:MM:SS UTC`, as call times are stored and stamped; '' when absent. */
export function formatUtc(value: unknown): string {
  if (value === null || value === undefined || value === '') return '';
  const date = new Date(String(value));
  return Number.isNaN(date.getTime()) ? String(value) : `${date.toISOString().replace('T', ' ').slice(0, 19)} UTC`;
}

export function UtcField({ source }: FieldProps & { source: string }) {
  const record = useRecordContext();
  return (
    <Typography component="span" variant="body2" sx={{ whiteSpace: 'nowrap' }}>
      {record ? formatUtc(get(record, source)) : ''}
    </Typography>
  );
}
