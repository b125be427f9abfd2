import type { ReactElement } from 'react';
import EventIcon from '@mui/icons-material/Event';
import { Create, DataTable, DateInput, Edit, List, SimpleForm, TextField, TextInput, regex, required } from 'react-admin';
import { useCanWrite } from '../auth/permissions';
import { ListActions } from './resource-helpers';
import type { ConsoleResource } from './types';

/**
 * The holiday calendar (GraphQL type Holiday): one local date per holiday, read on each pricelist's own
 * clock by the rate timings that say "only on holidays" or "not on holidays" (docs/RATING.md). Dates are
 * plain `YYYY-MM-DD` text, never converted through a time zone.
 */

const holidayFilters = [
  <TextInput key="q" source="q" label="Search holidays" alwaysOn resettable />,
  <DateInput key="date_gte" source="date_gte" label="From" alwaysOn />,
];

function HolidayList(): ReactElement {
  const canWrite = useCanWrite();
  return (
    // No "Create" invitation on an empty list for read-only tokens; writers open a holiday to edit or delete it.
    <List
      empty={canWrite ? undefined : false}
      filters={holidayFilters}
      actions={<ListActions />}
      sort={{ field: 'date', order: 'ASC' }}
      perPage={25}
    >
      <DataTable rowClick={canWrite ? 'edit' : false} bulkActionButtons={false}>
        <DataTable.Col source="date" label="Date">
          <TextField source="date" data-testid="holiday-date" />
        </DataTable.Col>
        <DataTable.Col source="name" label="Name">
          <TextField source="name" data-testid="holiday-name" emptyText="—" />
        </DataTable.Col>
      </DataTable>
    </List>
  );
}

const LOCAL_DATE = regex(/^\d{4}-\d{2}-\d{2}$/, 'A date YYYY-MM-DD');

/** The API checks the date again (a real date, unique in the calendar). */
function HolidayForm(): ReactElement {
  return (
    <SimpleForm>
      <DateInput
        source="date"
        label="Date"
        validate={[required(), LOCAL_DATE]}
        helperText="A local date: each pricelist reads it on its own time zone"
      />
      <TextInput source="name" label="Name" helperText="e.g. Christmas" />
    </SimpleForm>
  );
}

function HolidayCreate(): ReactElement {
  return (
    <Create redirect="list">
      <HolidayForm />
    </Create>
  );
}

/** The edit page's toolbar has Save and Delete (SimpleForm's default). */
function HolidayEdit(): ReactElement {
  return (
    <Edit mutationMode="pessimistic" redirect="list">
      <HolidayForm />
    </Edit>
  );
}

export const holidays: ConsoleResource = {
  name: 'Holiday',
  list: HolidayList,
  create: HolidayCreate,
  edit: HolidayEdit,
  icon: EventIcon,
  options: { label: 'Holidays' },
  recordRepresentation: 'date',
};
