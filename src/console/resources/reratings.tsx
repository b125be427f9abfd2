import { useEffect, useState, type FormEvent, type ReactElement } from 'react';
import PlayArrowIcon from '@mui/icons-material/PlayArrow';
import PreviewIcon from '@mui/icons-material/Preview';
import PublishedWithChangesIcon from '@mui/icons-material/PublishedWithChanges';
import {
  Alert,
  Box,
  Button as MuiButton,
  Card,
  CardContent,
  Chip,
  LinearProgress,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  TextField as MuiTextField,
  Typography,
} from '@mui/material';
import {
  Confirm,
  CreateButton,
  DataTable,
  FilterButton,
  Labeled,
  Link,
  List,
  NumberField,
  SelectInput,
  Show,
  SimpleShowLayout,
  TextField,
  Title,
  TopToolbar,
  useCreatePath,
  useListContext,
  useLogoutIfAccessDenied,
  useNotify,
  useRecordContext,
  useRedirect,
  useShowContext,
} from 'react-admin';
import { useCanWrite } from '../auth/permissions';
import { MinorUnitsField, formatMinorUnits, formatUtc } from '../components/money';
import { gql } from '../graphql';
import { UtcDateField, formatUtcInput, parseUtcInput } from './resource-helpers';
import type { ConsoleResource } from './types';

/**
 * Reratings (GraphQL type Rerating; docs/API.md "Reratings"): correcting calls already charged after a
 * price change. A selection names the calls by when they started (`from` inclusive, `to` exclusive) and
 * optionally their accounts, the pricelist and carrier of the rate they were charged with, and a
 * destination prefix. The dry run (reratingPreview, a query: any token) says what a run would change;
 * a run (createRerating, a mutation: writers only) corrects each changed fee through the ledger, in
 * batches run by the workers, its counts growing as they go until its state is `done`.
 */

/** A rerating run as the API answers it. BigInt fields are JSON numbers, or decimal strings past 2^53. */
interface ReratingRecord {
  id: string;
  state: string;
  from: string;
  to: string;
  account_tags?: string[] | null;
  pricelist_tag?: string | null;
  carrier_tag?: string | null;
  prefix?: string | null;
  /** Records the selection held when the run started; absent on runs started before it was kept. */
  total?: number | null;
  seen: number;
  changed: number;
  unchanged: number;
  skipped: number;
  difference: number | string;
  batches: number;
  created_at: string;
  updated_at: string;
  finished_at?: string | null;
}

const STATES = [
  { id: 'running', name: 'Running' },
  { id: 'done', name: 'Done' },
];

/** How often a page showing a running rerating reads it again. */
const POLL_MS = 1500;

const isRunning = (record: Pick<ReratingRecord, 'state'> | undefined) => record?.state === 'running';

/** `+1,200`, `-300`, `0`: a difference in minor units with its sign. */
function signed(value: unknown): string {
  const text = formatMinorUnits(value);
  return /^\d/.test(text) && text !== '0' ? `+${text}` : text;
}

/* ---------- pieces of a run ---------- */

function StateChip(): ReactElement | null {
  const record = useRecordContext<ReratingRecord>();
  if (!record) return null;
  return (
    <Chip
      label={record.state}
      color={record.state === 'done' ? 'success' : 'info'}
      size="small"
      variant="outlined"
      data-testid="rerating-state"
    />
  );
}

/** `2026-11-01 00:00:00 UTC → 2026-11-26 00:00:00 UTC` (the end exclusive). */
function PeriodField(): ReactElement | null {
  const record = useRecordContext<ReratingRecord>();
  if (!record) return null;
  return (
    <Typography component="span" variant="body2" data-testid="rerating-period" sx={{ whiteSpace: 'nowrap' }}>
      {formatUtc(record.from)} → {formatUtc(record.to)}
    </Typography>
  );
}

/** What a selection adds to its period, e.g. "accounts alice, bob · prefix 4420"; "all charged calls" without more. */
export function selectionSummary(selection: {
  account_tags?: string[] | null;
  pricelist_tag?: string | null;
  carrier_tag?: string | null;
  prefix?: string | null;
}): string {
  const parts: string[] = [];
  if (selection.account_tags && selection.account_tags.length > 0)
    parts.push(`${selection.account_tags.length === 1 ? 'account' : 'accounts'} ${selection.account_tags.join(', ')}`);
  if (selection.pricelist_tag) parts.push(`pricelist ${selection.pricelist_tag}`);
  if (selection.carrier_tag) parts.push(`carrier ${selection.carrier_tag}`);
  if (selection.prefix) parts.push(`prefix ${selection.prefix}`);
  return parts.length > 0 ? parts.join(' · ') : 'all charged calls';
}

function SelectionField(): ReactElement | null {
  const record = useRecordContext<ReratingRecord>();
  if (!record) return null;
  return (
    <Typography component="span" variant="body2" data-testid="rerating-selection">
      {selectionSummary(record)}
    </Typography>
  );
}

/**
 * How far a run is: the records read and changed so far, as a share of the records its selection held
 * when it started (`total`; runs started before it was kept have none, and their bar moves without a share).
 */
function Progress(): ReactElement | null {
  const record = useRecordContext<ReratingRecord>();
  if (!record) return null;
  const running = isRunning(record);
  const share = record.total ? Math.min(100, Math.round((record.seen * 100) / record.total)) : null;
  return (
    <Box sx={{ minWidth: 160 }}>
      <LinearProgress
        variant={running && share === null ? 'indeterminate' : 'determinate'}
        value={running ? (share ?? 0) : 100}
        color={running ? 'primary' : 'success'}
        aria-label={`Progress of rerating ${record.id}`}
      />
      <Typography variant="caption" data-testid="rerating-progress">
        {record.seen}
        {record.total ? ` of ${record.total}` : ''} read, {record.changed} changed{running ? ' so far' : ''}
      </Typography>
    </Box>
  );
}

/* ---------- list ---------- */

const reratingFilters = [<SelectInput key="state" source="state" label="State" choices={STATES} />];

/** Reads the list again while one of its runs is running. */
function PollWhileRunning(): null {
  const { data, refetch } = useListContext<ReratingRecord>();
  const running = (data ?? []).some(isRunning);
  useEffect(() => {
    if (!running) return undefined;
    const timer = setInterval(() => void refetch(), POLL_MS);
    return () => clearInterval(timer);
  }, [running, refetch]);
  return null;
}

/** Any token may dry-run a selection; only writers start a run from that page. */
function ReratingListActions(): ReactElement {
  const canWrite = useCanWrite();
  return (
    <TopToolbar>
      <FilterButton />
      <CreateButton
        label={canWrite ? 'New rerating' : 'Dry run'}
        icon={canWrite ? <PublishedWithChangesIcon /> : <PreviewIcon />}
        data-testid="rerating-new"
      />
    </TopToolbar>
  );
}

function ReratingList(): ReactElement {
  return (
    <List
      title="Reratings"
      empty={false}
      filters={reratingFilters}
      actions={<ReratingListActions />}
      sort={{ field: 'created_at', order: 'DESC' }}
      perPage={25}
    >
      <PollWhileRunning />
      <DataTable rowClick="show" bulkActionButtons={false}>
        <DataTable.Col source="state" label="State">
          <StateChip />
        </DataTable.Col>
        <DataTable.Col source="from" label="Period (calls started)" disableSort>
          <PeriodField />
        </DataTable.Col>
        <DataTable.Col source="account_tags" label="Selection" disableSort>
          <SelectionField />
        </DataTable.Col>
        <DataTable.Col source="changed" label="Changed" align="right" disableSort>
          <NumberField source="changed" data-testid="rerating-changed" />
        </DataTable.Col>
        <DataTable.Col source="difference" label="Difference (minor units)" align="right" disableSort>
          <MinorUnitsField source="difference" testId="rerating-difference" />
        </DataTable.Col>
        <DataTable.Col source="seen" label="Progress" disableSort>
          <Progress />
        </DataTable.Col>
        <DataTable.Col source="created_at" label="Created">
          <UtcDateField source="created_at" />
        </DataTable.Col>
      </DataTable>
    </List>
  );
}

/* ---------- show ---------- */

/** Reads the shown run again while it runs. */
function PollShowWhileRunning(): null {
  const { record, refetch } = useShowContext<ReratingRecord>();
  const running = isRunning(record);
  useEffect(() => {
    if (!running) return undefined;
    const timer = setInterval(() => void refetch(), POLL_MS);
    return () => clearInterval(timer);
  }, [running, refetch]);
  return null;
}

function ReratingTitle(): ReactElement {
  const record = useRecordContext<ReratingRecord>();
  return <span>Rerating {record ? `of ${formatUtc(record.from)}` : ''}</span>;
}

/** The run's transactions in the transactions list: its period, and its account when it names one. */
function TransactionsLink(): ReactElement | null {
  const record = useRecordContext<ReratingRecord>();
  const createPath = useCreatePath();
  if (!record) return null;
  const filter: Record<string, string> = { timestamp_begin_gte: record.from, timestamp_begin_lte: record.to };
  if (record.account_tags?.length === 1) filter.account_tag = record.account_tags[0];
  if (record.prefix) filter.destination_prefix = record.prefix;
  const to = `${createPath({ resource: 'Transaction', type: 'list' })}?filter=${encodeURIComponent(JSON.stringify(filter))}`;
  return (
    <Link to={to} variant="body2">
      Calls of this period
    </Link>
  );
}

function ReratingShow(): ReactElement {
  return (
    <Show title={<ReratingTitle />} actions={<TopToolbar />}>
      <PollShowWhileRunning />
      <SimpleShowLayout>
        <Labeled label="State">
          <StateChip />
        </Labeled>
        <Labeled label="Progress">
          <Progress />
        </Labeled>
        <Labeled label="Calls started (from, inclusive → to, exclusive)">
          <PeriodField />
        </Labeled>
        <Labeled label="Selection">
          <SelectionField />
        </Labeled>
        <NumberField source="seen" label="Records read" data-testid="rerating-seen" />
        <NumberField source="changed" label="Changed (fee corrected)" data-testid="rerating-changed" />
        <NumberField source="unchanged" label="Unchanged" data-testid="rerating-unchanged" />
        <NumberField source="skipped" label="Skipped (not rated again, or rolled back meanwhile)" data-testid="rerating-skipped" />
        <MinorUnitsField source="difference" label="Difference (minor units: charged +, refunded -)" testId="rerating-difference" />
        <NumberField source="batches" label="Batches done" data-testid="rerating-batches" />
        <UtcDateField source="created_at" label="Created" />
        <UtcDateField source="updated_at" label="Last progress" />
        <UtcDateField source="finished_at" label="Finished" data-testid="rerating-finished" />
        <TextField source="id" label="Run id" data-testid="rerating-id" />
        <Labeled label="Records">
          <TransactionsLink />
        </Labeled>
      </SimpleShowLayout>
    </Show>
  );
}

/* ---------- new rerating: the dry run and the start ---------- */

/** The selection as the API takes it (reratingPreview and createRerating have the same arguments). */
interface Selection {
  from: string;
  to: string;
  account_tags: string[] | null;
  pricelist_tag: string | null;
  carrier_tag: string | null;
  prefix: string | null;
}

interface ReratingPreview {
  records: number;
  changed: number;
  unchanged: number;
  unrated: number;
  difference: number | string;
  accounts: Array<{ account_tag: string; records: number; difference: number | string }>;
  sample: Array<{
    id: string;
    account_tag: string;
    transaction_tag: string;
    timestamp_begin?: string | null;
    fee_before: number | string;
    fee_after: number | string;
  }>;
}

/** How many of the biggest changes the dry run shows. */
const SAMPLE_SIZE = 20;

const SELECTION_ARGS =
  '$from: DateTime!, $to: DateTime!, $account_tags: [String!], $pricelist_tag: String, $carrier_tag: String, $prefix: String';
const SELECTION_VALUES =
  'from: $from, to: $to, account_tags: $account_tags, pricelist_tag: $pricelist_tag, carrier_tag: $carrier_tag, prefix: $prefix';

const PREVIEW_QUERY = /* GraphQL */ `
  query ReratingPreview(${SELECTION_ARGS}, $sample: Int) {
    reratingPreview(${SELECTION_VALUES}, sample: $sample) {
      records
      changed
      unchanged
      unrated
      difference
      accounts {
        account_tag
        records
        difference
      }
      sample {
        id
        account_tag
        transaction_tag
        timestamp_begin
        fee_before
        fee_after
      }
    }
  }
`;

const CREATE_MUTATION = /* GraphQL */ `
  mutation CreateRerating(${SELECTION_ARGS}) {
    createRerating(${SELECTION_VALUES}) {
      id
      state
    }
  }
`;

interface Choices {
  pricelists: Array<{ pricelist_tag: string; name: string | null }>;
  carriers: Array<{ carrier_tag: string; active: boolean }>;
}

const CHOICES_QUERY = /* GraphQL */ `
  query ReratingChoices {
    allPricelists(perPage: 1000, sortField: "pricelist_tag", sortOrder: "ASC") {
      pricelist_tag
      name
    }
    allCarriers(perPage: 1000, sortField: "carrier_tag", sortOrder: "ASC") {
      carrier_tag
      active
    }
  }
`;

/** `alice, bob` or `alice bob` as a list of tags; null (every account) when empty. */
export function accountTagsOf(text: string): string[] | null {
  const tags = [...new Set(text.split(/[\s,;]+/).filter((t) => t !== ''))];
  return tags.length > 0 ? tags : null;
}

const orNull = (text: string) => (text.trim() === '' ? null : text.trim());

/** The form's fields, as typed. */
interface Fields {
  from: string;
  to: string;
  accounts: string;
  pricelist: string;
  carrier: string;
  prefix: string;
}

/** Yesterday at this minute to the next minute (UTC): the last day of calls. */
function defaultFields(): Fields {
  const now = new Date();
  now.setUTCSeconds(0, 0);
  return {
    from: formatUtcInput(new Date(now.getTime() - 86_400_000)),
    to: formatUtcInput(new Date(now.getTime() + 60_000)),
    accounts: '',
    pricelist: '',
    carrier: '',
    prefix: '',
  };
}

/** The selection of the fields, or what is wrong with them. */
function selectionOf(fields: Fields): { selection: Selection } | { problem: string } {
  const from = parseUtcInput(fields.from);
  const to = parseUtcInput(fields.to);
  if (!from) return { problem: 'Give the start of the period (From)' };
  if (!to) return { problem: 'Give the end of the period (To)' };
  if (new Date(to).getTime() <= new Date(from).getTime()) return { problem: 'The end of the period (To) must be after its start (From)' };
  return {
    selection: {
      from,
      to,
      account_tags: accountTagsOf(fields.accounts),
      pricelist_tag: orNull(fields.pricelist),
      carrier_tag: orNull(fields.carrier),
      prefix: orNull(fields.prefix),
    },
  };
}

function Count({ label, value, testId }: { label: string; value: string | number; testId: string }): ReactElement {
  return (
    <Box sx={{ minWidth: 96 }}>
      <Typography variant="caption" color="text.secondary" component="div">
        {label}
      </Typography>
      <Typography variant="h5" component="div" data-testid={testId} sx={{ fontVariantNumeric: 'tabular-nums' }}>
        {value}
      </Typography>
    </Box>
  );
}

/** What the dry run found: the counts, the difference per account, the biggest changes. */
function PreviewView({ preview, selection }: { preview: ReratingPreview; selection: Selection }): ReactElement {
  const createPath = useCreatePath();
  return (
    <Box sx={{ mt: 3 }} data-testid="rerating-preview" aria-live="polite">
      <Typography variant="h6" component="h2">
        Dry run: nothing was changed
      </Typography>
      <Typography variant="body2" color="text.secondary">
        Calls started {formatUtc(selection.from)} → {formatUtc(selection.to)}, {selectionSummary(selection)}.
      </Typography>
      <Stack direction="row" spacing={3} sx={{ my: 2, flexWrap: 'wrap' }}>
        <Count label="Records" value={preview.records} testId="preview-records" />
        <Count label="Changed" value={preview.changed} testId="preview-changed" />
        <Count label="Unchanged" value={preview.unchanged} testId="preview-unchanged" />
        <Count label="Not rated again" value={preview.unrated} testId="preview-unrated" />
        <Count label="Difference (minor units)" value={signed(preview.difference)} testId="preview-difference" />
      </Stack>
      {preview.changed === 0 ? (
        <Alert severity="info" data-testid="preview-nothing">
          No record of this selection would change: every fee is what the current prices give.
        </Alert>
      ) : null}
      {preview.accounts.length > 0 ? (
        <>
          <Typography variant="subtitle1" component="h3">
            Per account
          </Typography>
          <Table size="small" aria-label="Per account" data-testid="preview-accounts" sx={{ maxWidth: 640, mb: 2 }}>
            <TableHead>
              <TableRow>
                <TableCell>Account</TableCell>
                <TableCell align="right">Records changed</TableCell>
                <TableCell align="right">Difference (minor units)</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {preview.accounts.map((a) => (
                <TableRow key={a.account_tag} data-testid="preview-account">
                  <TableCell data-testid="preview-account-tag">{a.account_tag}</TableCell>
                  <TableCell align="right" data-testid="preview-account-records">
                    {a.records}
                  </TableCell>
                  <TableCell align="right" data-testid="preview-account-difference">
                    {signed(a.difference)}
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </>
      ) : null}
      {preview.sample.length > 0 ? (
        <>
          <Typography variant="subtitle1" component="h3">
            Biggest changes{preview.changed > preview.sample.length ? ` (${preview.sample.length} of ${preview.changed})` : ''}
          </Typography>
          <Table size="small" aria-label="Biggest changes" data-testid="preview-sample">
            <TableHead>
              <TableRow>
                <TableCell>Account</TableCell>
                <TableCell>Transaction</TableCell>
                <TableCell>Began</TableCell>
                <TableCell align="right">Fee before</TableCell>
                <TableCell align="right">Fee after</TableCell>
                <TableCell align="right">Difference</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {preview.sample.map((c) => (
                <TableRow key={c.id} data-testid="preview-change">
                  <TableCell>{c.account_tag}</TableCell>
                  <TableCell>
                    <Link to={createPath({ resource: 'Transaction', type: 'show', id: c.id })}>{c.transaction_tag}</Link>
                  </TableCell>
                  <TableCell sx={{ whiteSpace: 'nowrap' }}>{formatUtc(c.timestamp_begin)}</TableCell>
                  <TableCell align="right">{formatMinorUnits(c.fee_before)}</TableCell>
                  <TableCell align="right">{formatMinorUnits(c.fee_after)}</TableCell>
                  <TableCell align="right">{signed(String(BigInt(String(c.fee_after)) - BigInt(String(c.fee_before))))}</TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </>
      ) : null}
    </Box>
  );
}

function NewRerating(): ReactElement {
  const canWrite = useCanWrite();
  const notify = useNotify();
  const redirect = useRedirect();
  const logoutIfAccessDenied = useLogoutIfAccessDenied();
  const [fields, setFields] = useState<Fields>(defaultFields);
  const [choices, setChoices] = useState<Choices | null>(null);
  const [choicesError, setChoicesError] = useState<string | null>(null);
  const [busy, setBusy] = useState<'preview' | 'start' | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [preview, setPreview] = useState<{ preview: ReratingPreview; selection: Selection } | null>(null);
  const [confirming, setConfirming] = useState(false);

  useEffect(() => {
    let live = true;
    gql<{ allPricelists: Choices['pricelists'] | null; allCarriers: Choices['carriers'] | null }>(CHOICES_QUERY)
      .then((data) => {
        if (live) setChoices({ pricelists: data.allPricelists ?? [], carriers: data.allCarriers ?? [] });
      })
      .catch((e: unknown) => {
        if (live) setChoicesError(e instanceof Error ? e.message : String(e));
      });
    return () => {
      live = false;
    };
  }, []);

  // A changed selection makes the shown dry run stale: it goes.
  const set = (name: keyof Fields) => (event: { target: { value: string } }) => {
    setFields((f) => ({ ...f, [name]: event.target.value }));
    setPreview(null);
    setError(null);
  };

  const checked = selectionOf(fields);
  const problem = 'problem' in checked ? checked.problem : null;

  const fail = async (e: unknown, what: string) => {
    await logoutIfAccessDenied(e).catch(() => undefined);
    const message = e instanceof Error ? e.message : String(e);
    setError(message);
    notify(`${what}: ${message}`, { type: 'error' });
  };

  const dryRun = async (event?: FormEvent) => {
    event?.preventDefault();
    if (!('selection' in checked) || busy) return;
    const { selection } = checked;
    setBusy('preview');
    setError(null);
    setPreview(null);
    try {
      const data = await gql<{ reratingPreview: ReratingPreview }>(PREVIEW_QUERY, { ...selection, sample: SAMPLE_SIZE });
      setPreview({ preview: data.reratingPreview, selection });
    } catch (e) {
      await fail(e, 'Dry run failed');
    } finally {
      setBusy(null);
    }
  };

  const start = async () => {
    setConfirming(false);
    if (!('selection' in checked) || busy) return;
    setBusy('start');
    setError(null);
    try {
      const { createRerating } = await gql<{ createRerating: { id: string; state: string } }>(CREATE_MUTATION, checked.selection);
      notify('Rerating started: the workers correct the fees in batches', { type: 'success' });
      redirect('show', 'Rerating', createRerating.id);
    } catch (e) {
      await fail(e, 'Rerating not started');
    } finally {
      setBusy(null);
    }
  };

  const shown =
    preview && 'selection' in checked && JSON.stringify(preview.selection) === JSON.stringify(checked.selection) ? preview : null;

  return (
    <Card sx={{ mt: 2 }}>
      <Title title="New rerating" />
      <CardContent>
        <Typography variant="h5" component="h1" gutterBottom>
          {canWrite ? 'New rerating' : 'Rerating dry run'}
        </Typography>
        <Typography variant="body2" color="text.secondary" sx={{ mb: 2, maxWidth: 760 }}>
          Rates the selected calls again at the prices valid when each started, with the rates as they are now. The dry run counts what
          would change and changes nothing; a rerating corrects each changed fee through the ledger, charging or refunding the account (and
          its parents) the difference, once per record.
        </Typography>
        <Box component="form" onSubmit={dryRun} aria-label="Rerating selection" noValidate>
          <Stack spacing={2} sx={{ maxWidth: 520 }}>
            {choicesError ? <Alert severity="error">Pricelists and carriers could not be loaded: {choicesError}</Alert> : null}
            <Stack direction="row" spacing={2}>
              <MuiTextField
                id="rerating-from"
                type="datetime-local"
                label="From (UTC)"
                value={fields.from}
                onChange={set('from')}
                required
                fullWidth
                helperText="Calls started from this time (inclusive)"
                slotProps={{ inputLabel: { shrink: true } }}
              />
              <MuiTextField
                id="rerating-to"
                type="datetime-local"
                label="To (UTC)"
                value={fields.to}
                onChange={set('to')}
                required
                fullWidth
                helperText="... up to this time (exclusive)"
                slotProps={{ inputLabel: { shrink: true } }}
              />
            </Stack>
            <MuiTextField
              id="rerating-accounts"
              label="Accounts"
              value={fields.accounts}
              onChange={set('accounts')}
              helperText="Account tags separated by commas; empty: every account"
            />
            <MuiTextField
              select
              id="rerating-pricelist"
              label="Pricelist"
              value={fields.pricelist}
              onChange={set('pricelist')}
              disabled={!choices}
              helperText="Only calls charged with a rate of this pricelist"
              slotProps={{ select: { native: true }, inputLabel: { shrink: true } }}
            >
              <option value="">{choices ? 'Any pricelist' : 'Loading…'}</option>
              {choices?.pricelists.map((p) => (
                <option key={p.pricelist_tag} value={p.pricelist_tag}>
                  {p.pricelist_tag}
                  {p.name ? ` (${p.name})` : ''}
                </option>
              ))}
            </MuiTextField>
            <MuiTextField
              select
              id="rerating-carrier"
              label="Carrier"
              value={fields.carrier}
              onChange={set('carrier')}
              disabled={!choices}
              helperText="Only calls charged with a rate of this carrier"
              slotProps={{ select: { native: true }, inputLabel: { shrink: true } }}
            >
              <option value="">{choices ? 'Any carrier' : 'Loading…'}</option>
              {choices?.carriers.map((c) => (
                <option key={c.carrier_tag} value={c.carrier_tag}>
                  {c.carrier_tag}
                  {c.active ? '' : ' (inactive)'}
                </option>
              ))}
            </MuiTextField>
            <MuiTextField
              id="rerating-prefix"
              label="Destination prefix"
              value={fields.prefix}
              onChange={set('prefix')}
              helperText="Only calls whose destination starts with it; empty: every destination"
            />
            {problem ? (
              <Typography variant="body2" color="error" data-testid="rerating-problem">
                {problem}
              </Typography>
            ) : null}
            <Stack direction="row" spacing={2}>
              <MuiButton type="submit" variant="outlined" startIcon={<PreviewIcon />} disabled={problem !== null || busy !== null}>
                {busy === 'preview' ? 'Counting…' : 'Dry run'}
              </MuiButton>
              {canWrite ? (
                <MuiButton
                  variant="contained"
                  startIcon={<PlayArrowIcon />}
                  disabled={problem !== null || busy !== null}
                  onClick={() => setConfirming(true)}
                >
                  {busy === 'start' ? 'Starting…' : 'Start rerating'}
                </MuiButton>
              ) : null}
            </Stack>
            {!canWrite ? (
              <Alert severity="info" data-testid="rerating-read-only">
                Starting a rerating needs a token with the write scope; this token can run the dry run.
              </Alert>
            ) : null}
            {error ? (
              <Alert severity="error" data-testid="rerating-error">
                {error}
              </Alert>
            ) : null}
          </Stack>
        </Box>
        {shown ? <PreviewView preview={shown.preview} selection={shown.selection} /> : null}
        <Confirm
          isOpen={confirming}
          title="Start this rerating?"
          content={
            shown
              ? `It corrects the fees of the selected calls: the dry run found ${shown.preview.changed} to change, ${signed(shown.preview.difference)} minor units in all. The accounts are charged or refunded the differences.`
              : 'It corrects the fees of the selected calls, charging or refunding the accounts the differences. Run the dry run first to see what would change.'
          }
          confirm="Start rerating"
          onConfirm={() => void start()}
          onClose={() => setConfirming(false)}
        />
      </CardContent>
    </Card>
  );
}

export const reratings: ConsoleResource = {
  name: 'Rerating',
  list: ReratingList,
  show: ReratingShow,
  create: NewRerating,
  icon: PublishedWithChangesIcon,
  options: { label: 'Reratings' },
  recordRepresentation: 'id',
};
