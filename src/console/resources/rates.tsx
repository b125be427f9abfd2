import type { ReactElement } from 'react';
import PriceChangeIcon from '@mui/icons-material/PriceChange';
import { Table, TableBody, TableCell, TableHead, TableRow, Typography } from '@mui/material';
import {
  Create,
  DataTable,
  Edit,
  Labeled,
  List,
  NumberField,
  NumberInput,
  Show,
  SimpleForm,
  SimpleShowLayout,
  TextField,
  TextInput,
  minValue,
  required,
  useRecordContext,
} from 'react-admin';
import { useCanWrite } from '../auth/permissions';
import { ListActions, ShowActions, TagInput, UtcDateField, UtcDateTimeInput } from './resource-helpers';
import { TimingField, TimingInputs, timingForApi, timingSummary, type RateTiming } from './timing';
import type { ConsoleResource } from './types';

/**
 * Rates (GraphQL type PricelistRate): what calls to a destination prefix cost in a pricelist, and
 * the carrier they go out on. Money is in minor units of the pricelist's currency.
 */

const rateFilters = [
  <TextInput key="q" source="q" label="Search rates" alwaysOn resettable />,
  <TagInput key="pricelist_tag" source="pricelist_tag" reference="Pricelist" tagField="pricelist_tag" label="Pricelist" />,
  <TagInput key="carrier_tag" source="carrier_tag" reference="Carrier" tagField="carrier_tag" label="Carrier" />,
  <TextInput key="prefix" source="prefix" label="Prefix" />,
];

function RateList(): ReactElement {
  const canWrite = useCanWrite();
  return (
    // No "Create" invitation on an empty list for read-only tokens.
    <List
      empty={canWrite ? undefined : false}
      filters={rateFilters}
      actions={<ListActions />}
      sort={{ field: 'prefix', order: 'ASC' }}
      perPage={25}
    >
      <DataTable rowClick="show" bulkActionButtons={false}>
        <DataTable.Col source="prefix" label="Prefix">
          <TextField source="prefix" data-testid="rate-prefix" emptyText="(any)" />
        </DataTable.Col>
        <DataTable.Col source="pricelist_tag" label="Pricelist" />
        <DataTable.Col source="carrier_tag" label="Carrier" />
        <DataTable.Col source="rate" label="Rate" align="right">
          <NumberField source="rate" data-testid="rate-rate" />
        </DataTable.Col>
        <DataTable.NumberCol source="connect_fee" label="Connect fee" />
        <DataTable.NumberCol source="rate_increment" label="Increment (s)" />
        <DataTable.NumberCol source="interval_start" label="Interval start (s)" />
        <DataTable.Col source="timing" label="Timing" disableSort>
          <TimingField data-testid="rate-timing" />
        </DataTable.Col>
        <DataTable.Col source="datetime_start" label="Valid from">
          <UtcDateField source="datetime_start" />
        </DataTable.Col>
        <DataTable.Col source="datetime_end" label="Valid until">
          <UtcDateField source="datetime_end" />
        </DataTable.Col>
      </DataTable>
    </List>
  );
}

/** One superseded version of a rate, as a rate deck import keeps it. */
interface PreviousVersion {
  datetime_start?: string | null;
  datetime_end?: string | null;
  connect_fee?: number | null;
  rate?: number | null;
  rate_increment?: number | null;
  interval_start?: number | null;
  description?: string | null;
  timing?: RateTiming | null;
}

const showDate = (value: string | null | undefined) => {
  const date = value ? new Date(value) : null;
  return date && !Number.isNaN(date.getTime()) ? `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC` : '—';
};
const showValue = (value: unknown) => (value === null || value === undefined || value === '' ? '—' : String(value));

/** The terms this rate had before, as the API gives them (in time order), in a plain table. */
function PreviousVersions(): ReactElement {
  const record = useRecordContext<{ id: string; previous_versions?: PreviousVersion[] | null }>();
  const versions = record?.previous_versions ?? [];
  if (versions.length === 0) {
    return (
      <Typography variant="body2" data-testid="rate-previous-versions-empty">
        No previous versions.
      </Typography>
    );
  }
  return (
    <Table size="small" aria-label="Previous versions" data-testid="rate-previous-versions">
      <TableHead>
        <TableRow>
          <TableCell>Valid from</TableCell>
          <TableCell>Valid until</TableCell>
          <TableCell align="right">Rate</TableCell>
          <TableCell align="right">Connect fee</TableCell>
          <TableCell align="right">Increment (s)</TableCell>
          <TableCell align="right">Interval start (s)</TableCell>
          <TableCell>Timing</TableCell>
          <TableCell>Description</TableCell>
        </TableRow>
      </TableHead>
      <TableBody>
        {versions.map((version, index) => (
          <TableRow key={`${version.datetime_start ?? ''}-${index}`} data-testid="rate-previous-version">
            <TableCell>{showDate(version.datetime_start)}</TableCell>
            <TableCell>{showDate(version.datetime_end)}</TableCell>
            <TableCell align="right">{showValue(version.rate)}</TableCell>
            <TableCell align="right">{showValue(version.connect_fee)}</TableCell>
            <TableCell align="right">{showValue(version.rate_increment)}</TableCell>
            <TableCell align="right">{showValue(version.interval_start)}</TableCell>
            <TableCell>{timingSummary(version.timing) || '—'}</TableCell>
            <TableCell>{showValue(version.description)}</TableCell>
          </TableRow>
        ))}
      </TableBody>
    </Table>
  );
}

function RateShow(): ReactElement {
  return (
    <Show actions={<ShowActions />}>
      <SimpleShowLayout>
        <TextField source="prefix" label="Prefix" data-testid="rate-prefix" emptyText="(any destination)" />
        <TextField source="pricelist_tag" label="Pricelist" data-testid="rate-pricelist" />
        <TextField source="carrier_tag" label="Carrier" data-testid="rate-carrier" />
        <NumberField source="rate" label="Rate (minor units per minute)" data-testid="rate-rate" />
        <NumberField source="connect_fee" label="Connect fee (minor units)" data-testid="rate-connect-fee" />
        <NumberField source="rate_increment" label="Billing increment (s)" data-testid="rate-increment" />
        <NumberField source="interval_start" label="Interval start (s)" data-testid="rate-interval-start" />
        <TimingField label="Timing" data-testid="rate-timing" emptyText="At all times (no timing)" />
        <UtcDateField source="datetime_start" label="Valid from" data-testid="rate-datetime-start" emptyText="no start bound" />
        <UtcDateField source="datetime_end" label="Valid until" data-testid="rate-datetime-end" emptyText="indefinitely" />
        <TextField source="description" label="Description" data-testid="rate-description" emptyText="—" />
        <TextField source="id" label="ID" />
        <Labeled label="Previous versions" fullWidth>
          <PreviousVersions />
        </Labeled>
      </SimpleShowLayout>
    </Show>
  );
}

/** Keeps an emptied prefix as '' (matches every destination) instead of react-admin's null. */
const keepEmpty = (value: string | null | undefined) => value ?? '';

function RateForm(): ReactElement {
  return (
    <SimpleForm>
      <TagInput source="pricelist_tag" reference="Pricelist" tagField="pricelist_tag" label="Pricelist" validate={required()} />
      <TagInput source="carrier_tag" reference="Carrier" tagField="carrier_tag" label="Carrier" validate={required()} />
      <TextInput
        source="prefix"
        label="Prefix"
        parse={keepEmpty}
        helperText="Destination prefix (digits); the longest match wins; empty matches every destination"
      />
      <NumberInput source="rate" label="Rate" helperText="Minor units per minute" validate={[required(), minValue(0)]} />
      <NumberInput
        source="connect_fee"
        label="Connect fee"
        helperText="Minor units, charged once when the call connects"
        validate={minValue(0)}
      />
      <NumberInput
        source="rate_increment"
        label="Billing increment (s)"
        helperText="Billing step in seconds (0 means 1)"
        validate={minValue(0)}
      />
      <NumberInput
        source="interval_start"
        label="Interval start (s)"
        helperText="Second from which the rate applies"
        validate={minValue(0)}
      />
      <UtcDateTimeInput source="datetime_start" label="Valid from" helperText="Empty: no start bound" />
      <UtcDateTimeInput source="datetime_end" label="Valid until" helperText="Exclusive; empty: valid indefinitely" />
      <TextInput source="description" label="Description" multiline />
      <TimingInputs />
    </SimpleForm>
  );
}

/** The timing inputs as the API takes them: an object, or null when nothing is set (clears a rate's timing). */
const withTiming = (data: Record<string, unknown>) => ({ ...data, timing: timingForApi(data.timing) });

function RateCreate(): ReactElement {
  return (
    <Create redirect="show" record={{ prefix: '', connect_fee: 0, rate_increment: 1, interval_start: 0 }} transform={withTiming}>
      <RateForm />
    </Create>
  );
}

function RateEdit(): ReactElement {
  return (
    <Edit mutationMode="pessimistic" redirect="show" transform={withTiming}>
      <RateForm />
    </Edit>
  );
}

export const rates: ConsoleResource = {
  name: 'PricelistRate',
  list: RateList,
  show: RateShow,
  create: RateCreate,
  edit: RateEdit,
  icon: PriceChangeIcon,
  options: { label: 'Rates' },
  recordRepresentation: 'prefix',
};
