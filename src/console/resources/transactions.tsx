import type { ReactElement } from 'react';
import ReceiptLongIcon from '@mui/icons-material/ReceiptLong';
import {
  BooleanField,
  DataTable,
  Labeled,
  Link,
  List,
  NumberField,
  ReferenceField,
  SelectInput,
  Show,
  SimpleShowLayout,
  TextField,
  TextInput,
  TopToolbar,
  WrapperField,
  useCreatePath,
  useRecordContext,
} from 'react-admin';
import { Box, Chip, Stack, Table, TableBody, TableCell, TableHead, TableRow, Typography } from '@mui/material';
import { MinorUnitsField, formatMinorUnits, formatUtc } from '../components/money';
import { ListActions, UtcDateField, UtcDateTimeInput } from './resource-helpers';
import { timingSummary, type RateTiming } from './timing';
import type { ConsoleResource } from './types';

/**
 * Call records (GraphQL type Transaction). Read-only in the console: records are written by the
 * agent and the workers (or imports); the raw record mutations are not offered here.
 * fee is in minor units of the rated pricelist's currency.
 */

const transactionFilters = [
  <TextInput key="q" source="q" label="Search calls" alwaysOn resettable />,
  <TextInput key="account_tag" source="account_tag" label="Account tag" alwaysOn />,
  <UtcDateTimeInput key="timestamp_begin_gte" source="timestamp_begin_gte" label="Began from" alwaysOn />,
  <UtcDateTimeInput key="timestamp_begin_lte" source="timestamp_begin_lte" label="Began until" alwaysOn />,
  <TextInput key="destination_prefix" source="destination_prefix" label="Destination prefix" />,
  <SelectInput
    key="inbound"
    source="inbound"
    label="Direction"
    choices={[
      { id: false, name: 'Outbound' },
      { id: true, name: 'Inbound' },
    ]}
  />,
];

function TransactionList(): ReactElement {
  return (
    <List
      filters={transactionFilters}
      actions={<ListActions creatable={false} exportable />}
      sort={{ field: 'timestamp_begin', order: 'DESC' }}
      perPage={25}
    >
      <DataTable rowClick="show" bulkActionButtons={false}>
        <DataTable.Col source="transaction_tag" label="Transaction tag">
          <TextField source="transaction_tag" data-testid="transaction-tag" />
        </DataTable.Col>
        <DataTable.Col source="account_tag" label="Account" />
        <DataTable.Col source="source" label="Source" />
        <DataTable.Col source="destination" label="Destination" />
        <DataTable.Col source="destination_rate.carrier_tag" label="Carrier" disableSort>
          <TextField source="destination_rate.carrier_tag" emptyText="—" />
        </DataTable.Col>
        <DataTable.Col source="timestamp_begin" label="Began">
          <UtcDateField source="timestamp_begin" />
        </DataTable.Col>
        <DataTable.NumberCol source="duration" label="Duration (s)" />
        <DataTable.Col source="fee" label="Fee" align="right">
          <MinorUnitsField source="fee" testId="transaction-fee" />
        </DataTable.Col>
        <DataTable.Col source="inbound" label="Inbound">
          <BooleanField source="inbound" />
        </DataTable.Col>
      </DataTable>
    </List>
  );
}

/** The account's page when the account still exists, its tag otherwise. */
function AccountLink(): ReactElement {
  const record = useRecordContext<{ id: string; account_tag: string; account?: { id: string } | null }>();
  if (record?.account?.id) {
    return (
      <ReferenceField source="account.id" reference="Account" link="show">
        <TextField source="account_tag" data-testid="transaction-account" />
      </ReferenceField>
    );
  }
  return <TextField source="account_tag" data-testid="transaction-account" />;
}

function TransactionShow(): ReactElement {
  return (
    <Show actions={<TopToolbar />}>
      <SimpleShowLayout>
        <TextField source="transaction_tag" label="Transaction tag" data-testid="transaction-tag" />
        <WrapperField label="Account">
          <AccountLink />
        </WrapperField>
        <TextField source="source" label="Source" data-testid="transaction-source" emptyText="—" />
        <TextField source="source_ip" label="Source IP" emptyText="—" />
        <TextField source="destination" label="Destination" data-testid="transaction-destination" emptyText="—" />
        <TextField source="carrier_ip" label="Carrier IP" emptyText="—" />
        <BooleanField source="inbound" label="Inbound" data-testid="transaction-inbound" />
        <BooleanField source="failed" label="Failed" data-testid="transaction-failed" />
        <BooleanField source="authorized" label="Authorized" emptyText="— (recorded without authorization)" />
        <TextField source="unauthorized_reason" label="Unauthorized reason" emptyText="—" />
        <UtcDateField source="timestamp_auth" label="Authorized at" />
        <UtcDateField source="timestamp_begin" label="Began" data-testid="transaction-begin" />
        <UtcDateField source="timestamp_end" label="Ended" data-testid="transaction-end" />
        <NumberField source="duration" label="Duration (s)" data-testid="transaction-duration" />
        <MinorUnitsField source="fee" label="Fee (minor units)" testId="transaction-fee" />
        <WrapperField label="Tags">
          <Tags />
        </WrapperField>
        <Labeled label="Rated with" fullWidth>
          <Box
            component="dl"
            data-testid="transaction-rate"
            sx={{ typography: 'body2', display: 'grid', gridTemplateColumns: 'max-content 1fr', columnGap: 2, rowGap: 0.5, m: 0 }}
          >
            <RateSnapshot />
          </Box>
        </Labeled>
        <Segments label={false} />
        <Reratings label={false} />
        <TextField source="id" label="ID" />
      </SimpleShowLayout>
    </Show>
  );
}

/** The call's tags (plain strings) as chips. */
function Tags(): ReactElement {
  const record = useRecordContext<{ id: string; tags?: string[] | null }>();
  const tags = record?.tags ?? [];
  if (tags.length === 0) return <span>—</span>;
  return (
    <Stack direction="row" spacing={0.5} data-testid="transaction-tags">
      {tags.map((tag) => (
        <Chip key={tag} label={tag} size="small" />
      ))}
    </Stack>
  );
}

const SNAPSHOT_FIELDS: Array<[key: string, label: string]> = [
  ['pricelist_tag', 'Pricelist'],
  ['carrier_tag', 'Carrier'],
  ['prefix', 'Prefix'],
  ['rate', 'Rate'],
  ['connect_fee', 'Connect fee'],
  ['rate_increment', 'Increment (s)'],
  ['interval_start', 'Interval start (s)'],
  ['description', 'Description'],
];

/** The destination_rate snapshot copied onto the record when it was rated. */
function RateSnapshot(): ReactElement {
  const record = useRecordContext<{ id: string; destination_rate?: Record<string, unknown> | null }>();
  const snapshot = record?.destination_rate;
  if (!snapshot) return <dd style={{ margin: 0 }}>Not rated</dd>;
  return (
    <>
      {SNAPSHOT_FIELDS.map(([key, label]) => (
        <Box key={key} sx={{ display: 'contents' }}>
          <Box component="dt" sx={{ color: 'text.secondary' }}>
            {label}
          </Box>
          <Box component="dd" sx={{ m: 0 }} data-testid={`transaction-rate-${key.replace(/_/g, '-')}`}>
            {snapshot[key] === null || snapshot[key] === undefined || snapshot[key] === '' ? '—' : String(snapshot[key])}
          </Box>
        </Box>
      ))}
    </>
  );
}

/** One stretch of a call rated with a timed rate, at one price (docs/RATING.md, "A call across a boundary"). */
interface ChargedSegment {
  prefix: string;
  from: number;
  seconds: number;
  /** BigInt: a JSON number, or a decimal string past 2^53. */
  fee: number | string;
  rate: number;
  rate_increment: number;
  interval_start: number;
  description?: string | null;
  timing?: RateTiming | null;
}

/**
 * What each stretch of a call rated with a timed rate was charged; nothing for one-price records
 * (segments null). The record's fee is the connect fee plus the segments' fees.
 */
function Segments(_props: { label?: false }): ReactElement | null {
  const record = useRecordContext<{ id: string; segments?: ChargedSegment[] | null; destination_rate?: { connect_fee?: number } | null }>();
  const segments = record?.segments;
  if (!segments) return null;
  const connectFee = record?.destination_rate?.connect_fee;
  return (
    <Labeled label="Charged segments" fullWidth>
      <Box>
        <Table size="small" aria-label="Charged segments" data-testid="transaction-segments">
          <TableHead>
            <TableRow>
              <TableCell align="right">From (s)</TableCell>
              <TableCell align="right">Seconds</TableCell>
              <TableCell align="right">Rate (per minute)</TableCell>
              <TableCell align="right">Increment (s)</TableCell>
              <TableCell align="right">Fee</TableCell>
              <TableCell>Description</TableCell>
              <TableCell>Timing</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {segments.map((segment) => (
              <TableRow key={segment.from} data-testid="transaction-segment">
                <TableCell align="right" data-testid="segment-from">
                  {segment.from}
                </TableCell>
                <TableCell align="right" data-testid="segment-seconds">
                  {segment.seconds}
                </TableCell>
                <TableCell align="right" data-testid="segment-rate">
                  {segment.rate}
                </TableCell>
                <TableCell align="right">{segment.rate_increment}</TableCell>
                <TableCell align="right" data-testid="segment-fee">
                  {formatMinorUnits(segment.fee)}
                </TableCell>
                <TableCell>{segment.description || '—'}</TableCell>
                <TableCell data-testid="segment-timing">{timingSummary(segment.timing) || 'no timing (base rate)'}</TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
        <Typography variant="caption" color="text.secondary">
          The fee is the connect fee{connectFee === undefined ? '' : ` (${connectFee})`} of the price at the call&apos;s start plus the
          segments&apos; fees.
        </Typography>
      </Box>
    </Labeled>
  );
}

/** One rerating that changed the record's fee (Transaction.reratings, oldest first). */
interface RecordRerating {
  run: string;
  at: string;
  /** BigInt: a JSON number, or a decimal string past 2^53. */
  fee_before: number | string;
  fee_after: number | string;
}

const difference = (before: number | string, after: number | string): string => {
  try {
    const d = BigInt(String(after)) - BigInt(String(before));
    return `${d > 0n ? '+' : ''}${formatMinorUnits(d.toString())}`;
  } catch {
    return '—';
  }
};

/**
 * The record's rerating history (docs/API.md "Reratings"): each run that corrected its fee, when, the fee
 * before and after, and the run; nothing for a record never rerated. The fee first charged is the first
 * row's fee before.
 */
function Reratings(_props: { label?: false }): ReactElement | null {
  const record = useRecordContext<{ id: string; reratings?: RecordRerating[] | null }>();
  const createPath = useCreatePath();
  const reratings = record?.reratings;
  if (!reratings || reratings.length === 0) return null;
  return (
    <Labeled label="Reratings" fullWidth>
      <Box>
        <Table size="small" aria-label="Reratings" data-testid="transaction-reratings">
          <TableHead>
            <TableRow>
              <TableCell>When</TableCell>
              <TableCell align="right">Fee before</TableCell>
              <TableCell align="right">Fee after</TableCell>
              <TableCell align="right">Difference</TableCell>
              <TableCell>Run</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {reratings.map((r) => (
              <TableRow key={`${r.run}-${r.at}`} data-testid="transaction-rerating">
                <TableCell sx={{ whiteSpace: 'nowrap' }}>{formatUtc(r.at)}</TableCell>
                <TableCell align="right" data-testid="rerating-fee-before">
                  {formatMinorUnits(r.fee_before)}
                </TableCell>
                <TableCell align="right" data-testid="rerating-fee-after">
                  {formatMinorUnits(r.fee_after)}
                </TableCell>
                <TableCell align="right">{difference(r.fee_before, r.fee_after)}</TableCell>
                <TableCell>
                  <Link to={createPath({ resource: 'Rerating', type: 'show', id: r.run })} data-testid="rerating-run">
                    {r.run}
                  </Link>
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
        <Typography variant="caption" color="text.secondary">
          Fees in minor units; the fee first charged is the first rerating&apos;s fee before.
        </Typography>
      </Box>
    </Labeled>
  );
}

export const transactions: ConsoleResource = {
  name: 'Transaction',
  list: TransactionList,
  show: TransactionShow,
  icon: ReceiptLongIcon,
  options: { label: 'Transactions' },
  recordRepresentation: 'transaction_tag',
};
