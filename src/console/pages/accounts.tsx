import { useMemo, useState, type FormEvent, type ReactElement } from 'react';
import {
  ArrayField,
  AutocompleteArrayInput,
  BooleanField,
  BooleanInput,
  ChipField,
  ColumnsButton,
  Create,
  CreateButton,
  DataTable,
  Datagrid,
  Edit,
  EditButton,
  FilterButton,
  FunctionField,
  Labeled,
  Link,
  List,
  NullableBooleanInput,
  NumberField,
  NumberInput,
  ReferenceArrayField,
  ReferenceArrayInput,
  ReferenceManyField,
  SelectField,
  SelectInput,
  Show,
  SimpleForm,
  SingleFieldList,
  TextArrayField,
  TextArrayInput,
  TextField,
  TextInput,
  TopToolbar,
  email,
  required,
  useCreatePath,
  useLogoutIfAccessDenied,
  useNotify,
  useRecordContext,
  useRefresh,
  type RaRecord,
} from 'react-admin';
import {
  Alert,
  Box,
  Button,
  Card,
  CardContent,
  CardHeader,
  Dialog,
  DialogActions,
  DialogContent,
  DialogContentText,
  DialogTitle,
  Grid,
  TextField as MuiTextField,
  Typography,
} from '@mui/material';
import AccountBalanceWalletIcon from '@mui/icons-material/AccountBalanceWallet';
import { useCanWrite } from '../auth/permissions';
import {
  MinorUnitsField,
  UtcField,
  formatMinorUnits,
  integerText,
  newIdempotencyKey,
  nonNegativeIntegerText,
  parseIntegerText,
} from '../components/money';
import { gql } from '../graphql';

const TYPES = [
  { id: 'PREPAID', name: 'Prepaid' },
  { id: 'POSTPAID', name: 'Postpaid' },
];

interface RunningTransaction {
  transaction_tag: string;
}

interface AccountRecord extends RaRecord {
  account_tag: string;
  name?: string | null;
  balance: number | string;
  balance_alert_threshold?: number | string | null;
  max_call_cost?: number | string | null;
  hourly_spend_limit?: number | string | null;
  daily_spend_limit?: number | string | null;
  running_transactions?: RunningTransaction[];
}

/**
 * The spend limits (docs/AGENT.md "Spend limits"): BigInt minor units, null for no limit. Shown on the
 * account's page, as optional columns of the list, and edited in the form (writers only).
 */
const SPEND_LIMITS = [
  { source: 'max_call_cost', label: 'Max call cost', help: 'The most one call may cost', testId: 'account-max-call-cost' },
  {
    source: 'hourly_spend_limit',
    label: 'Hourly spend limit',
    help: 'The most it may spend in a rolling hour',
    testId: 'account-hourly-spend-limit',
  },
  {
    source: 'daily_spend_limit',
    label: 'Daily spend limit',
    help: 'The most it may spend in a rolling day',
    testId: 'account-daily-spend-limit',
  },
] as const;

type SpendLimitSource = (typeof SPEND_LIMITS)[number]['source'];

/** A spend limit of the record in context, in minor units; `no limit` when unset. */
function SpendLimitField({ source, testId }: { source: SpendLimitSource; testId?: string }): ReactElement {
  const record = useRecordContext<AccountRecord>();
  const value = record?.[source];
  const unset = value === null || value === undefined || value === '';
  return (
    <Typography
      component="span"
      variant="body2"
      data-testid={testId}
      color={unset ? 'text.secondary' : undefined}
      sx={{ fontVariantNumeric: 'tabular-nums', whiteSpace: 'nowrap' }}
    >
      {unset ? 'no limit' : formatMinorUnits(value)}
    </Typography>
  );
}

/* ---------- list ---------- */

const accountFilters = [
  <TextInput key="q" source="q" label="Search" alwaysOn resettable />,
  <SelectInput key="type" source="type" label="Type" choices={TYPES} />,
  <NullableBooleanInput key="active" source="active" label="Active" />,
  <NullableBooleanInput key="running" source="with_running_transactions" label="With running calls" />,
];

function AccountListActions() {
  const canWrite = useCanWrite();
  return (
    <TopToolbar>
      <ColumnsButton />
      <FilterButton />
      {canWrite ? <CreateButton label="Create account" /> : null}
    </TopToolbar>
  );
}

const runningCount = (record: AccountRecord) => record.running_transactions?.length ?? 0;

export function AccountList() {
  const canWrite = useCanWrite();
  return (
    <List
      title="Accounts"
      // The default empty page offers "Create": not to a read-only token.
      empty={canWrite ? undefined : false}
      filters={accountFilters}
      actions={<AccountListActions />}
      sort={{ field: 'account_tag', order: 'ASC' }}
      perPage={25}
    >
      {/* The spend limits are optional columns: hidden until picked with "Columns". */}
      <DataTable rowClick="show" bulkActionButtons={false} hiddenColumns={SPEND_LIMITS.map((l) => l.source)}>
        <DataTable.Col source="account_tag" label="Tag" />
        <DataTable.Col source="name" label="Name">
          <TextField source="name" emptyText="" />
        </DataTable.Col>
        <DataTable.Col source="type" label="Type">
          <SelectField source="type" choices={TYPES} />
        </DataTable.Col>
        <DataTable.Col source="balance" label="Balance (minor units)" align="right">
          <MinorUnitsField source="balance" />
        </DataTable.Col>
        <DataTable.Col source="active" label="Active">
          <BooleanField source="active" />
        </DataTable.Col>
        {SPEND_LIMITS.map((limit) => (
          <DataTable.Col key={limit.source} source={limit.source} label={limit.label} align="right" disableSort>
            <SpendLimitField source={limit.source} />
          </DataTable.Col>
        ))}
        <DataTable.Col<AccountRecord> label="Running calls" align="right" disableSort render={(r) => runningCount(r)} />
      </DataTable>
    </List>
  );
}

/* ---------- top up / adjust ---------- */

const ADJUST_BALANCE = /* GraphQL */ `
  mutation AdjustBalance($account_tag: String!, $amount: BigInt!, $reason: String!, $idempotency_key: String) {
    adjustBalance(account_tag: $account_tag, amount: $amount, reason: $reason, idempotency_key: $idempotency_key) {
      id
      balance
    }
  }
`;

/**
 * Adds (or, negative, takes off) an amount with a reason, through adjustBalance. The idempotency
 * key belongs to what is being submitted: a retry or a double click of the same amount and reason
 * reuses it (the API applies it once); a changed amount or reason gets a fresh one.
 */
function AdjustBalanceButton() {
  const record = useRecordContext<AccountRecord>();
  const notify = useNotify();
  const refresh = useRefresh();
  const logoutIfAccessDenied = useLogoutIfAccessDenied();
  const [open, setOpen] = useState(false);
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [keySeed, setKeySeed] = useState(0);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // One key until a submission succeeds: a retry after a lost answer must reuse it even when the operator
  // retyped the amount or fixed the reason meanwhile (a new key would apply the top-up twice). The server
  // answers a replay with its first result and refuses the key with another amount (docs/DECISIONS.md).
  const idempotencyKey = useMemo(() => newIdempotencyKey(), [keySeed]);

  if (!record) return null;
  const amountError = amount.trim() === '' ? null : (integerText(amount) ?? (BigInt(amount.trim()) === 0n ? 'Must not be zero' : null));
  const canSubmit = !busy && amount.trim() !== '' && amountError === null && reason.trim() !== '';

  const close = () => {
    if (busy) return;
    setOpen(false);
    setError(null);
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!canSubmit) return;
    setBusy(true);
    setError(null);
    try {
      const { adjustBalance } = await gql<{ adjustBalance: { id: string; balance: number | string } | null }>(ADJUST_BALANCE, {
        account_tag: record.account_tag,
        amount: amount.trim(),
        reason: reason.trim(),
        idempotency_key: idempotencyKey,
      });
      notify(`Balance of ${record.account_tag} is now ${formatMinorUnits(adjustBalance?.balance)} minor units`, { type: 'success' });
      setOpen(false);
      setAmount('');
      setReason('');
      setKeySeed((n) => n + 1);
      refresh();
    } catch (e) {
      await logoutIfAccessDenied(e).catch(() => undefined);
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <Button size="small" startIcon={<AccountBalanceWalletIcon />} onClick={() => setOpen(true)}>
        Top up / adjust
      </Button>
      <Dialog open={open} onClose={close} aria-labelledby="adjust-balance-title" fullWidth maxWidth="xs">
        <form onSubmit={submit} aria-label="Adjust balance">
          <DialogTitle id="adjust-balance-title">Adjust the balance of {record.account_tag}</DialogTitle>
          <DialogContent>
            <DialogContentText variant="body2">
              Current balance: {formatMinorUnits(record.balance)} minor units. A positive amount credits the account, a negative one debits
              it.
            </DialogContentText>
            <MuiTextField
              id="adjust-amount"
              label="Amount (minor units)"
              value={amount}
              onChange={(e) => setAmount(e.target.value)}
              error={amountError !== null}
              helperText={amountError ?? 'Whole minor units, e.g. 1000 or -250'}
              slotProps={{ htmlInput: { inputMode: 'numeric' } }}
              required
              fullWidth
              autoFocus
              margin="normal"
            />
            <MuiTextField
              id="adjust-reason"
              label="Reason"
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              helperText="Kept in the ledger with the adjustment"
              required
              fullWidth
              margin="normal"
            />
            {error ? (
              <Alert severity="error" role="alert" sx={{ mt: 1 }}>
                {error}
              </Alert>
            ) : null}
          </DialogContent>
          <DialogActions>
            <Button onClick={close} disabled={busy}>
              Cancel
            </Button>
            <Button type="submit" variant="contained" disabled={!canSubmit}>
              {busy ? 'Applying…' : 'Apply adjustment'}
            </Button>
          </DialogActions>
        </form>
      </Dialog>
    </>
  );
}

/* ---------- show ---------- */

function AccountShowActions() {
  const canWrite = useCanWrite();
  if (!canWrite) return <TopToolbar />;
  return (
    <TopToolbar>
      <AdjustBalanceButton />
      <EditButton label="Edit" />
    </TopToolbar>
  );
}

function AccountTitle() {
  const record = useRecordContext<AccountRecord>();
  return <span>Account {record ? record.account_tag : ''}</span>;
}

function BalanceCard() {
  return (
    <Card variant="outlined" sx={{ height: '100%' }}>
      <CardContent>
        <Typography id="account-balance-label" variant="overline" color="text.secondary">
          Balance (minor units)
        </Typography>
        <Typography variant="h4" component="div" aria-labelledby="account-balance-label">
          <MinorUnitsField source="balance" testId="account-balance" inherit />
        </Typography>
        <Box sx={{ display: 'flex', gap: 3, mt: 1, flexWrap: 'wrap' }}>
          <Labeled label="Type">
            <SelectField source="type" choices={TYPES} />
          </Labeled>
          <Labeled label="Active">
            <BooleanField source="active" />
          </Labeled>
          <Labeled label="Alert threshold (minor units)">
            <FunctionField<AccountRecord>
              render={(r) =>
                r.balance_alert_threshold === null || r.balance_alert_threshold === undefined
                  ? 'service default'
                  : formatMinorUnits(r.balance_alert_threshold)
              }
            />
          </Labeled>
        </Box>
      </CardContent>
    </Card>
  );
}

function SpendLimitsCard() {
  return (
    <Card variant="outlined" data-testid="account-spend-limits">
      <CardHeader
        title="Spend limits (minor units)"
        subheader="Calls are authorized for no more than these leave; top-ups and adjustments are not spending"
        slotProps={{ title: { variant: 'subtitle1', component: 'h2' } }}
      />
      <CardContent sx={{ pt: 0, display: 'grid', gridTemplateColumns: 'repeat(auto-fill, minmax(220px, 1fr))', gap: 2 }}>
        {SPEND_LIMITS.map((limit) => (
          <Box key={limit.source}>
            <Labeled label={limit.label}>
              <SpendLimitField source={limit.source} testId={limit.testId} />
            </Labeled>
            <Typography variant="caption" color="text.secondary" component="div">
              {limit.help}
            </Typography>
          </Box>
        ))}
      </CardContent>
    </Card>
  );
}

function DetailsCard() {
  return (
    <Card variant="outlined" sx={{ height: '100%' }}>
      <CardContent sx={{ display: 'grid', gridTemplateColumns: 'repeat(auto-fill, minmax(200px, 1fr))', gap: 2 }}>
        <Labeled label="Name">
          <TextField source="name" emptyText="—" />
        </Labeled>
        <Labeled label="Customer tag">
          <TextField source="customer_tag" emptyText="—" />
        </Labeled>
        <Labeled label="Max concurrent calls">
          <NumberField source="max_concurrent_transactions" emptyText="no limit" />
        </Labeled>
        <Labeled label="Notification e-mail">
          <TextField source="notification_email" emptyText="—" />
        </Labeled>
        <Labeled label="Pricelist tags">
          <TextArrayField source="pricelist_tags" emptyText="—" />
        </Labeled>
        <Labeled label="Preferred carrier tags">
          <TextArrayField source="carrier_tags" emptyText="—" />
        </Labeled>
        <Labeled label="Tags">
          <TextArrayField source="tags" emptyText="—" />
        </Labeled>
        <Labeled label="Linked accounts">
          <ReferenceArrayField source="linked_accountsIds" reference="Account" emptyText="none">
            <SingleFieldList linkType="show" empty={<span>none</span>}>
              <ChipField source="account_tag" size="small" />
            </SingleFieldList>
          </ReferenceArrayField>
        </Labeled>
      </CardContent>
    </Card>
  );
}

function RunningCalls() {
  const record = useRecordContext<AccountRecord>();
  const count = record?.running_transactions?.length ?? 0;
  return (
    <Card variant="outlined">
      <CardHeader
        title={`Running calls (${count})`}
        subheader="Live: refreshed every 3 seconds"
        slotProps={{ title: { variant: 'subtitle1', component: 'h2' } }}
      />
      <ArrayField source="running_transactions">
        <Datagrid
          bulkActionButtons={false}
          rowClick={false}
          empty={
            <Typography sx={{ px: 2, pb: 2 }} color="text.secondary">
              No call in progress.
            </Typography>
          }
        >
          <TextField source="transaction_tag" label="Transaction" />
          <TextField source="source" label="Source" />
          <TextField source="destination" label="Destination" />
          <TextField source="carrier_ip" label="Carrier" emptyText="—" />
          <BooleanField source="inbound" label="Inbound" />
          <BooleanField source="in_progress" label="In progress" />
          <UtcField source="timestamp_begin" label="Began" />
          <NumberField source="destination_rate" label="Rate / min" emptyText="—" />
        </Datagrid>
      </ArrayField>
    </Card>
  );
}

function RecentTransactions() {
  const record = useRecordContext<AccountRecord>();
  const createPath = useCreatePath();
  if (!record) return null;
  const all = `${createPath({ resource: 'Transaction', type: 'list' })}?filter=${encodeURIComponent(JSON.stringify({ account_tag: record.account_tag }))}`;
  return (
    <Card variant="outlined">
      <CardHeader
        title="Recent transactions"
        slotProps={{ title: { variant: 'subtitle1', component: 'h2' } }}
        action={
          <Button component={Link} to={all} size="small">
            All transactions of this account
          </Button>
        }
      />
      <ReferenceManyField
        reference="Transaction"
        target="account_tag"
        source="account_tag"
        sort={{ field: 'timestamp_begin', order: 'DESC' }}
        perPage={10}
      >
        <Datagrid
          rowClick="show"
          bulkActionButtons={false}
          empty={
            <Typography sx={{ px: 2, pb: 2 }} color="text.secondary">
              No transactions yet.
            </Typography>
          }
        >
          <UtcField source="timestamp_begin" label="Began" sortable={false} />
          <TextField source="transaction_tag" label="Transaction" sortable={false} />
          <TextField source="source" label="Source" sortable={false} />
          <TextField source="destination" label="Destination" sortable={false} />
          <NumberField source="duration" label="Duration (s)" sortable={false} />
          <MinorUnitsField source="fee" label="Fee (minor units)" textAlign="right" sortable={false} />
          <BooleanField source="failed" label="Failed" sortable={false} />
        </Datagrid>
      </ReferenceManyField>
    </Card>
  );
}

export function AccountShow() {
  return (
    <Show title={<AccountTitle />} actions={<AccountShowActions />} queryOptions={{ refetchInterval: 3000 }}>
      <Box sx={{ p: 2 }}>
        <Grid container spacing={2}>
          <Grid size={{ xs: 12, md: 4 }}>
            <BalanceCard />
          </Grid>
          <Grid size={{ xs: 12, md: 8 }}>
            <DetailsCard />
          </Grid>
          <Grid size={12}>
            <SpendLimitsCard />
          </Grid>
          <Grid size={12}>
            <RunningCalls />
          </Grid>
          <Grid size={12}>
            <RecentTransactions />
          </Grid>
        </Grid>
      </Box>
    </Show>
  );
}

/* ---------- create and edit ---------- */

const tagHelp = 'Type a tag and press Enter';

function AccountInputs({ creating }: { creating: boolean }) {
  return (
    <>
      <TextInput source="account_tag" label="Account tag" validate={required()} />
      <TextInput source="name" label="Name" />
      <SelectInput source="type" label="Type" choices={TYPES} validate={required()} />
      {creating ? (
        <TextInput
          source="balance"
          label="Opening balance (minor units)"
          validate={integerText}
          parse={parseIntegerText}
          helperText="Whole minor units"
        />
      ) : (
        <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
          The balance changes with &quot;Top up / adjust&quot; on the account page, so every change is in the ledger.
        </Typography>
      )}
      <BooleanInput source="active" label="Active" />
      <NumberInput source="max_concurrent_transactions" label="Max concurrent calls" min={0} step={1} helperText="Empty: no limit" />
      <TextInput
        source="balance_alert_threshold"
        label="Balance alert threshold (minor units)"
        validate={integerText}
        parse={parseIntegerText}
        helperText="Empty: the service default"
      />
      <Typography variant="subtitle2" component="h3" sx={{ mt: 1 }}>
        Spend limits
      </Typography>
      {SPEND_LIMITS.map((limit) => (
        <TextInput
          key={limit.source}
          source={limit.source}
          label={`${limit.label} (minor units)`}
          validate={nonNegativeIntegerText}
          parse={parseIntegerText}
          helperText={`${limit.help}; empty: no limit`}
        />
      ))}
      <TextInput source="customer_tag" label="Customer tag" />
      <TextInput source="notification_email" label="Notification e-mail" type="email" validate={email()} />
      <TextInput source="notification_mobile" label="Notification mobile" />
      <ReferenceArrayInput source="linked_accountsIds" reference="Account" perPage={50} sort={{ field: 'account_tag', order: 'ASC' }}>
        <AutocompleteArrayInput
          label="Linked accounts"
          optionText="account_tag"
          filterToQuery={(q: string) => ({ q })}
          helperText="Parent accounts (resellers), by tag"
        />
      </ReferenceArrayInput>
      <TextArrayInput source="pricelist_tags" label="Pricelist tags" helperText={`${tagHelp}; in priority order`} />
      <TextArrayInput source="carrier_tags" label="Preferred carrier tags" helperText={tagHelp} />
      <TextArrayInput source="tags" label="Tags" helperText={tagHelp} />
    </>
  );
}

/** Create sends only what was filled in; the API applies its defaults to the rest. */
const withoutEmpty = (data: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(data).filter(([, v]) => v !== null && v !== undefined && v !== '' && !(Array.isArray(v) && v.length === 0)),
  );

function ReadOnlyNotice(): ReactElement {
  return <Alert severity="info">This token is read-only: it cannot change accounts.</Alert>;
}

export function AccountCreate() {
  const canWrite = useCanWrite();
  if (!canWrite) return <ReadOnlyNotice />;
  return (
    <Create title="Create account" redirect="show" transform={withoutEmpty}>
      <SimpleForm defaultValues={{ type: 'PREPAID', active: true }}>
        <AccountInputs creating />
      </SimpleForm>
    </Create>
  );
}

export function AccountEdit() {
  const canWrite = useCanWrite();
  if (!canWrite) return <ReadOnlyNotice />;
  return (
    <Edit title={<AccountTitle />} mutationMode="pessimistic" redirect="show">
      <SimpleForm>
        <AccountInputs creating={false} />
      </SimpleForm>
    </Edit>
  );
}
