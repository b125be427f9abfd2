import type { ReactElement } from 'react';
import {
  AutocompleteInput,
  CreateButton,
  DateField,
  DateTimeInput,
  DeleteButton,
  EditButton,
  ExportButton,
  FilterButton,
  TopToolbar,
  useGetList,
  type DateTimeInputProps,
  type Validator,
} from 'react-admin';
import { useCanWrite } from '../auth/permissions';

/**
 * Pieces the resource files of part 2 share (carriers, pricelists, rates, transactions).
 * Every button that changes data shows only for a token with the `write` scope.
 */

/** List toolbar: filters, Create (writers only) and, when asked, the CSV export. */
export function ListActions({ creatable = true, exportable = false }: { creatable?: boolean; exportable?: boolean }): ReactElement {
  const canWrite = useCanWrite();
  return (
    <TopToolbar>
      <FilterButton />
      {creatable && canWrite ? <CreateButton /> : null}
      {exportable ? <ExportButton label="Export CSV" /> : null}
    </TopToolbar>
  );
}

/** Show toolbar: Edit and Delete for writers, an empty bar (same spacing) otherwise. */
export function ShowActions({ deletable = true }: { deletable?: boolean }): ReactElement {
  const canWrite = useCanWrite();
  if (!canWrite) return <TopToolbar />;
  return (
    <TopToolbar>
      <EditButton />
      {deletable ? <DeleteButton mutationMode="pessimistic" /> : null}
    </TopToolbar>
  );
}

/**
 * Dates are UTC throughout the console, as in the API: a DateTimeInput shows and takes UTC
 * (`<DateTimeInput format={formatUtcInput} parse={parseUtcInput}>`), fields show UTC (UTC_DATETIME).
 */
const LOCAL_INPUT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/;

/** API value (`...Z`) to the `YYYY-MM-DDTHH:mm` of an `<input type="datetime-local">`, in UTC. */
export function formatUtcInput(value: unknown): string {
  if (value === null || value === undefined || value === '') return '';
  if (typeof value === 'string' && LOCAL_INPUT.test(value)) return value;
  const date = value instanceof Date ? value : new Date(String(value));
  return Number.isNaN(date.getTime()) ? '' : date.toISOString().slice(0, 16);
}

/** The input's `YYYY-MM-DDTHH:mm`, read as UTC, to the API's DateTime text; emptied is null (clears a bound). */
export function parseUtcInput(value: unknown): string | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'string' && LOCAL_INPUT.test(value)) return `${value}:00Z`;
  const date = value instanceof Date ? value : new Date(String(value));
  return Number.isNaN(date.getTime()) ? null : toApiDateTime(date);
}

/** `YYYY-MM-DDTHH:MM:SSZ` (UTC, no milliseconds). */
export function toApiDateTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** DateField options: date and time in UTC, e.g. "2026-01-15 10:00:38 UTC". */
export const UTC_DATETIME: Intl.DateTimeFormatOptions = {
  timeZone: 'UTC',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
  timeZoneName: 'short',
};

/** Locale of UTC_DATETIME: ISO-like order (sv-SE writes 2026-01-15 10:00:38). */
export const UTC_LOCALE = 'sv-SE';

/** A date-time field in UTC; `—` when empty. */
export function UtcDateField(props: { source: string; label?: string; 'data-testid'?: string; emptyText?: string }): ReactElement {
  const { emptyText = '—', ...rest } = props;
  return <DateField {...rest} showTime locales={UTC_LOCALE} options={UTC_DATETIME} emptyText={emptyText} />;
}

/** A date-time input in UTC (the label says so). */
export function UtcDateTimeInput(props: Omit<DateTimeInputProps, 'format' | 'parse'> & { label: string }): ReactElement {
  const { label, ...rest } = props;
  return <DateTimeInput {...rest} label={`${label} (UTC)`} format={formatUtcInput} parse={parseUtcInput} />;
}

/** Most records a tag picker loads at once. */
const TAG_CHOICES_MAX = 1000;

/**
 * Picks a pricelist or carrier by its tag. ReferenceInput cannot be used: references are resolved by
 * id, and rates name their pricelist and carrier by tag. Loads the referenced records once and
 * filters them in the browser.
 */
export function TagInput(props: {
  source: string;
  reference: 'Pricelist' | 'Carrier';
  tagField: 'pricelist_tag' | 'carrier_tag';
  label: string;
  validate?: Validator | Validator[];
  helperText?: string;
}): ReactElement {
  const { source, reference, tagField, label, validate, helperText } = props;
  const { data, isPending } = useGetList(reference, {
    pagination: { page: 1, perPage: TAG_CHOICES_MAX },
    sort: { field: tagField, order: 'ASC' },
    filter: {},
  });
  const choices = (data ?? []).map((record) => {
    const tag = String(record[tagField]);
    const name = typeof record.name === 'string' && record.name !== '' ? ` (${record.name})` : '';
    return { id: tag, name: `${tag}${name}` };
  });
  return (
    <AutocompleteInput
      source={source}
      label={label}
      choices={choices}
      isPending={isPending}
      validate={validate}
      helperText={helperText}
      sx={{ minWidth: 240 }}
    />
  );
}
