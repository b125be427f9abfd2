import type { ReactElement } from 'react';
import DnsIcon from '@mui/icons-material/Dns';
import {
  BooleanField,
  BooleanInput,
  Create,
  DataTable,
  Edit,
  List,
  NumberField,
  NumberInput,
  ReferenceManyCount,
  SelectField,
  SelectInput,
  Show,
  SimpleForm,
  SimpleShowLayout,
  TextField,
  TextInput,
  maxValue,
  minValue,
  required,
} from 'react-admin';
import { useCanWrite } from '../auth/permissions';
import { ListActions, ShowActions } from './resource-helpers';
import type { ConsoleResource } from './types';

/** Carriers (GraphQL type Carrier): where calls go out: host, port, protocol; inactive ones are not routed. */

const PROTOCOLS = [
  { id: 'UDP', name: 'UDP' },
  { id: 'TCP', name: 'TCP' },
];

const carrierFilters = [
  <TextInput key="q" source="q" label="Search carriers" alwaysOn resettable />,
  <SelectInput key="protocol" source="protocol" label="Protocol" choices={PROTOCOLS} />,
  <SelectInput
    key="active"
    source="active"
    label="Status"
    choices={[
      { id: true, name: 'Active' },
      { id: false, name: 'Inactive' },
    ]}
  />,
];

function CarrierList(): ReactElement {
  const canWrite = useCanWrite();
  return (
    // No "Create" invitation on an empty list for read-only tokens.
    <List
      empty={canWrite ? undefined : false}
      filters={carrierFilters}
      actions={<ListActions />}
      sort={{ field: 'carrier_tag', order: 'ASC' }}
      perPage={25}
    >
      <DataTable rowClick="show" bulkActionButtons={false}>
        <DataTable.Col source="carrier_tag" label="Carrier tag">
          <TextField source="carrier_tag" data-testid="carrier-tag" />
        </DataTable.Col>
        <DataTable.Col source="host" label="Host" />
        <DataTable.NumberCol source="port" label="Port" options={{ useGrouping: false }} />
        <DataTable.Col source="protocol" label="Protocol" />
        <DataTable.Col source="active" label="Active">
          <BooleanField source="active" />
        </DataTable.Col>
      </DataTable>
    </List>
  );
}

function CarrierShow(): ReactElement {
  return (
    <Show actions={<ShowActions />}>
      <SimpleShowLayout>
        <TextField source="carrier_tag" label="Carrier tag" data-testid="carrier-tag" />
        <TextField source="host" label="Host" data-testid="carrier-host" />
        <NumberField source="port" label="Port" options={{ useGrouping: false }} data-testid="carrier-port" />
        <SelectField source="protocol" label="Protocol" choices={PROTOCOLS} data-testid="carrier-protocol" />
        <BooleanField source="active" label="Active" data-testid="carrier-active" />
        <ReferenceManyCount label="Rates on this carrier" reference="PricelistRate" target="carrier_id" />
        <TextField source="id" label="ID" />
      </SimpleShowLayout>
    </Show>
  );
}

/** The inputs of both forms; the API checks them again (port 1-65535, unique carrier_tag). */
function CarrierForm(): ReactElement {
  return (
    <SimpleForm>
      <TextInput source="carrier_tag" label="Carrier tag" validate={required()} />
      <TextInput source="host" label="Host" helperText="Hostname or IP address" validate={required()} />
      <NumberInput source="port" label="Port" validate={[required(), minValue(1), maxValue(65535)]} />
      <SelectInput source="protocol" label="Protocol" choices={PROTOCOLS} validate={required()} />
      <BooleanInput source="active" label="Active" helperText="Inactive carriers are left out of routing" />
    </SimpleForm>
  );
}

function CarrierCreate(): ReactElement {
  return (
    <Create redirect="show" record={{ protocol: 'UDP', active: true, port: 5060 }}>
      <CarrierForm />
    </Create>
  );
}

function CarrierEdit(): ReactElement {
  return (
    <Edit mutationMode="pessimistic" redirect="show">
      <CarrierForm />
    </Edit>
  );
}

export const carriers: ConsoleResource = {
  name: 'Carrier',
  list: CarrierList,
  show: CarrierShow,
  create: CarrierCreate,
  edit: CarrierEdit,
  icon: DnsIcon,
  options: { label: 'Carriers' },
  recordRepresentation: 'carrier_tag',
};
