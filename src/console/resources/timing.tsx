import type { ReactElement } from 'react';
import { Box, Typography } from '@mui/material';
import { CheckboxGroupInput, SelectInput, TextInput, regex, useRecordContext } from 'react-admin';

/**
 * Rate timings (issue 34, docs/RATING.md "Rates by time of day"): when a rate applies, on its
 * pricelist's clock (time_zone). `days` are ISO weekdays (1 Monday to 7 Sunday), `start`/`end` local
 * `HH:MM:SS` (an end at or before the start runs past midnight), `holidays` 'only' or 'exclude'; a
 * null member says nothing, and a rate without a timing (null) applies at all times.
 */
export interface RateTiming {
  days?: number[] | null;
  start?: string | null;
  end?: string | null;
  holidays?: 'only' | 'exclude' | null;
}

export const WEEKDAYS = [
  { id: 1, name: 'Mon' },
  { id: 2, name: 'Tue' },
  { id: 3, name: 'Wed' },
  { id: 4, name: 'Thu' },
  { id: 5, name: 'Fri' },
  { id: 6, name: 'Sat' },
  { id: 7, name: 'Sun' },
];

const dayName = (day: number) => WEEKDAYS.find((d) => d.id === day)?.name ?? String(day);

/** Weekdays as runs: [1,2,3,4,5] is "Mon-Fri", [1,3,6,7] is "Mon, Wed, Sat, Sun". */
function daysSummary(days: number[]): string {
  const sorted = [...new Set(days)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j += 1;
    if (j - i >= 2) parts.push(`${dayName(sorted[i])}-${dayName(sorted[j])}`);
    else for (let k = i; k <= j; k += 1) parts.push(dayName(sorted[k]));
    i = j + 1;
  }
  return parts.join(', ');
}

/** `18:00:00` as `18:00`; seconds stay when they are not zero (`18:00:30`). */
const shortTime = (time: string) => (/^\d{2}:\d{2}:00$/.test(time) ? time.slice(0, 5) : time);

/**
 * A short reading of a timing, e.g. "Mon-Fri 18:00-22:00", "Sat, Sun", "22:00-06:00, not on
 * holidays", "holidays only"; '' for no timing (the rate applies at all times).
 */
export function timingSummary(timing: RateTiming | null | undefined): string {
  if (!timing) return '';
  const when: string[] = [];
  if (timing.days && timing.days.length > 0 && timing.days.length < 7) when.push(daysSummary(timing.days));
  if (timing.start && timing.end) when.push(`${shortTime(timing.start)}-${shortTime(timing.end)}`);
  else if (timing.start || timing.end) when.push(`${timing.start ?? '…'}-${timing.end ?? '…'}`);
  const parts = when.length > 0 ? [when.join(' ')] : [];
  if (timing.holidays === 'only') parts.push('holidays only');
  if (timing.holidays === 'exclude') parts.push('not on holidays');
  return parts.join(', ');
}

/** The timing of the record in context (or of `source`, e.g. a segment's) as its summary; `emptyText` for none. */
export function TimingField(props: { source?: string; label?: string; emptyText?: string; 'data-testid'?: string }): ReactElement {
  const { source = 'timing', emptyText = '', 'data-testid': testId } = props;
  const record = useRecordContext();
  const summary = timingSummary(record?.[source] as RateTiming | null | undefined);
  return (
    <Typography component="span" variant="body2" data-testid={testId} sx={{ whiteSpace: 'nowrap' }}>
      {summary === '' ? emptyText : summary}
    </Typography>
  );
}

/**
 * What the API takes from the form's timing inputs: null when nothing is set (or every day and
 * nothing else), else a RateTimingInput with its four members (null for the unset ones). Built
 * member by member, so the __typename of a loaded timing is never sent back. The API checks the rest
 * (a start needs an end, ...) and answers BAD_USER_INPUT naming the field (`timing.start and end`).
 */
export function timingForApi(value: unknown): RateTiming | null {
  if (value === null || typeof value !== 'object') return null;
  const timing = value as RateTiming;
  const days = Array.isArray(timing.days) ? [...new Set(timing.days.map(Number))].sort((a, b) => a - b) : [];
  const text = (t: unknown) => (typeof t === 'string' && t.trim() !== '' ? t.trim() : null);
  const result: RateTiming = {
    days: days.length === 0 || days.length === 7 ? null : days,
    start: text(timing.start),
    end: text(timing.end),
    holidays: timing.holidays === 'only' || timing.holidays === 'exclude' ? timing.holidays : null,
  };
  return result.days === null && result.start === null && result.end === null && result.holidays === null ? null : result;
}

const TIME_OF_DAY = regex(/^([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/, 'A local time HH:MM:SS, e.g. 18:00:00');

const HOLIDAY_RULES = [
  { id: 'only', name: 'Only on holidays' },
  { id: 'exclude', name: 'Not on holidays' },
];

/** The timing section of the rate form: its inputs edit `timing.*`; the form's transform sends timingForApi(). */
export function TimingInputs(): ReactElement {
  return (
    <Box data-testid="rate-timing-inputs" sx={{ width: '100%' }}>
      <Typography variant="subtitle1" sx={{ mt: 1 }}>
        Timing
      </Typography>
      <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
        When this rate applies, on the pricelist&apos;s time zone. Leave everything empty for a rate that applies at all times; a prefix can
        hold a base rate and timed ones (peak, weekend, holidays): the most specific matching one applies.
      </Typography>
      <CheckboxGroupInput source="timing.days" label="Days" choices={WEEKDAYS} helperText="None ticked: every day" />
      <Box sx={{ display: 'flex', gap: 2, flexWrap: 'wrap' }}>
        <TextInput source="timing.start" label="Start" validate={TIME_OF_DAY} helperText="HH:MM:SS, inclusive; empty: all day" />
        <TextInput
          source="timing.end"
          label="End"
          validate={TIME_OF_DAY}
          helperText="HH:MM:SS, exclusive; at or before the start: runs past midnight"
        />
      </Box>
      <SelectInput
        source="timing.holidays"
        label="Holidays"
        choices={HOLIDAY_RULES}
        emptyText="Any day"
        helperText="Holiday dates are on the Holidays page"
      />
    </Box>
  );
}
