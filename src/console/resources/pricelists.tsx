import type { ReactElement } from 'react';
import SellIcon from '@mui/icons-material/Sell';
import {
  CreateButton,
  Create,
  DataTable,
  Edit,
  Labeled,
  List,
  Pagination,
  ReferenceManyField,
  SelectField,
  SelectInput,
  Show,
  SimpleForm,
  SimpleShowLayout,
  TextField,
  TextInput,
  TopToolbar,
  required,
  useRecordContext,
} from 'react-admin';
import { useCanWrite } from '../auth/permissions';
import { ListActions, ShowActions, UtcDateField } from './resource-helpers';
import { TimingField } from './timing';
import type { ConsoleResource } from './types';

/** Pricelists (GraphQL type Pricelist): a named group of rates in one currency. */

const CURRENCIES = [
  { id: 'EUR', name: 'EUR' },
  { id: 'USD', name: 'USD' },
];

const pricelistFilters = [
  <TextInput key="q" source="q" label="Search pricelists" alwaysOn resettable />,
  <SelectInput key="currency" source="currency" label="Currency" choices={CURRENCIES} />,
];

function PricelistList(): ReactElement {
  const canWrite = useCanWrite();
  return (
    // No "Create" invitation on an empty list for read-only tokens.
    <List
      empty={canWrite ? undefined : false}
      filters={pricelistFilters}
      actions={<ListActions />}
      sort={{ field: 'pricelist_tag', order: 'ASC' }}
      perPage={25}
    >
      <DataTable rowClick="show" bulkActionButtons={false}>
        <DataTable.Col source="pricelist_tag" label="Pricelist tag">
          <TextField source="pricelist_tag" data-testid="pricelist-tag" />
        </DataTable.Col>
        <DataTable.Col source="name" label="Name" />
        <DataTable.Col source="currency" label="Currency" />
        <DataTable.Col source="time_zone" label="Time zone">
          <TextField source="time_zone" emptyText="UTC" data-testid="pricelist-time-zone" />
        </DataTable.Col>
      </DataTable>
    </List>
  );
}

/** "Add rate" on a pricelist's page: the rate form opens with this pricelist chosen. */
function AddRateButton(): ReactElement | null {
  const record = useRecordContext();
  const canWrite = useCanWrite();
  if (!record || !canWrite) return null;
  return <CreateButton resource="PricelistRate" label="Add rate" state={{ record: { pricelist_tag: record.pricelist_tag } }} />;
}

/** The rates of the shown pricelist, by prefix, 25 a page. */
function PricelistRates(): ReactElement {
  return (
    <Labeled label="Rates" fullWidth>
      <>
        <TopToolbar sx={{ minHeight: 0, p: 0 }}>
          <AddRateButton />
        </TopToolbar>
        <ReferenceManyField
          reference="PricelistRate"
          target="pricelist_id"
          sort={{ field: 'prefix', order: 'ASC' }}
          perPage={25}
          pagination={<Pagination rowsPerPageOptions={[25, 50, 100]} />}
        >
          <DataTable rowClick="show" bulkActionButtons={false} empty={<p data-testid="pricelist-no-rates">No rates in this pricelist.</p>}>
            <DataTable.Col source="prefix" label="Prefix">
              <TextField source="prefix" data-testid="pricelist-rate-prefix" emptyText="(any)" />
            </DataTable.Col>
            <DataTable.Col source="carrier_tag" label="Carrier" />
            <DataTable.NumberCol source="rate" label="Rate" />
            <DataTable.NumberCol source="connect_fee" label="Connect fee" />
            <DataTable.NumberCol source="rate_increment" label="Increment (s)" />
            <DataTable.NumberCol source="interval_start" label="Interval start (s)" />
            <DataTable.Col source="timing" label="Timing" disableSort>
              <TimingField data-testid="pricelist-rate-timing" />
            </DataTable.Col>
            <DataTable.Col source="datetime_start" label="Valid from">
              <UtcDateField source="datetime_start" />
            </DataTable.Col>
            <DataTable.Col source="datetime_end" label="Valid until">
              <UtcDateField source="datetime_end" />
            </DataTable.Col>
          </DataTable>
        </ReferenceManyField>
      </>
    </Labeled>
  );
}

function PricelistShow(): ReactElement {
  return (
    <Show actions={<ShowActions />}>
      <SimpleShowLayout>
        <TextField source="pricelist_tag" label="Pricelist tag" data-testid="pricelist-tag" />
        <TextField source="name" label="Name" data-testid="pricelist-name" emptyText="—" />
        <SelectField source="currency" label="Currency" choices={CURRENCIES} data-testid="pricelist-currency" />
        <TextField source="time_zone" label="Time zone (rate timings)" data-testid="pricelist-time-zone" emptyText="UTC" />
        <TextField source="id" label="ID" />
        <PricelistRates />
      </SimpleShowLayout>
    </Show>
  );
}

/** An emptied time zone is sent as null (UTC); surrounding spaces are dropped. */
const emptyAsNull = (value: string | null | undefined) =>
  value === null || value === undefined || value.trim() === '' ? null : value.trim();

/** Every save sends time_zone: null when the input is empty or untouched (the API reads null as UTC). */
const withTimeZone = (data: Record<string, unknown>) => ({ ...data, time_zone: emptyAsNull(data.time_zone as string | null | undefined) });

function PricelistForm(): ReactElement {
  return (
    <SimpleForm>
      <TextInput source="pricelist_tag" label="Pricelist tag" validate={required()} />
      <TextInput source="name" label="Name" />
      <SelectInput
        source="currency"
        label="Currency"
        choices={CURRENCIES}
        validate={required()}
        helperText="Rates are in minor units of this currency"
      />
      <TextInput
        source="time_zone"
        label="Time zone"
        parse={emptyAsNull}
        helperText="IANA time zone, e.g. Europe/Rome; empty = UTC. The clock its rates' timings (peak hours, weekdays, holidays) are read on"
      />
    </SimpleForm>
  );
}

function PricelistCreate(): ReactElement {
  return (
    <Create redirect="show" record={{ currency: 'EUR' }} transform={withTimeZone}>
      <PricelistForm />
    </Create>
  );
}

function PricelistEdit(): ReactElement {
  return (
    <Edit mutationMode="pessimistic" redirect="show" transform={withTimeZone}>
      <PricelistForm />
    </Edit>
  );
}

export const pricelists: ConsoleResource = {
  name: 'Pricelist',
  list: PricelistList,
  show: PricelistShow,
  create: PricelistCreate,
  edit: PricelistEdit,
  icon: SellIcon,
  options: { label: 'Pricelists' },
  recordRepresentation: 'pricelist_tag',
};
