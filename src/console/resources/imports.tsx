import { useEffect, useState, type FormEvent, type ReactElement } from 'react';
import ImportExportIcon from '@mui/icons-material/ImportExport';
import UploadFileIcon from '@mui/icons-material/UploadFile';
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
  CreateButton,
  DataTable,
  FilterButton,
  Labeled,
  List,
  NumberField,
  SelectInput,
  Show,
  SimpleShowLayout,
  TextField,
  TextInput,
  Title,
  TopToolbar,
  useListContext,
  useNotify,
  useRecordContext,
  useRedirect,
  useShowContext,
} from 'react-admin';
import { useCanWrite } from '../auth/permissions';
import { apiFetch } from '../graphql';
import { UtcDateField } from './resource-helpers';
import type { ConsoleResource } from './types';

/**
 * CDR file imports (GraphQL type Import): files of call detail records uploaded with
 * POST /v1/imports (docs/IMPORTS.md), their progress and rejected lines. The same file uploaded
 * again is the same import (its id is a hash of the content): an interrupted import resumes and no
 * call is charged twice. Files can also be imported with `npx rating import FILE`.
 */

interface ImportRecord {
  id: string;
  name?: string | null;
  state: string;
  lines: number;
  done: number;
  accepted: number;
  recorded: number;
  rejected: number;
  error?: string | null;
  rejects?: Array<{ line: number; reason: string; account_tag?: string | null }>;
}

const STATES = [
  { id: 'running', name: 'Running' },
  { id: 'done', name: 'Done' },
  { id: 'failed', name: 'Failed' },
];

/** How often a page showing a running import reads it again. */
const POLL_MS = 2000;

const importFilters = [
  <TextInput key="q" source="q" label="Search imports" alwaysOn resettable />,
  <SelectInput key="state" source="state" label="State" choices={STATES} />,
];

function StateChip(): ReactElement | null {
  const record = useRecordContext<ImportRecord>();
  if (!record) return null;
  const color = record.state === 'done' ? 'success' : record.state === 'failed' ? 'error' : 'info';
  return <Chip label={record.state} color={color} size="small" variant="outlined" data-testid="import-state" />;
}

function Progress(): ReactElement | null {
  const record = useRecordContext<ImportRecord>();
  if (!record) return null;
  const share = record.lines > 0 ? Math.min(100, (record.done / record.lines) * 100) : record.state === 'done' ? 100 : 0;
  return (
    <Box sx={{ minWidth: 160 }}>
      <LinearProgress
        variant={record.state === 'running' && record.lines === 0 ? 'indeterminate' : 'determinate'}
        value={share}
        aria-label={`Progress of ${record.name ?? record.id}`}
      />
      <Typography variant="caption" data-testid="import-progress">
        {record.done} of {record.lines} lines
        {record.state === 'running' ? ' read so far' : ''}
      </Typography>
    </Box>
  );
}

/** Reads the list again while one of its imports is running. */
function PollWhileRunning(): null {
  const { data, refetch } = useListContext<ImportRecord>();
  const running = (data ?? []).some((record) => record.state === 'running');
  useEffect(() => {
    if (!running) return undefined;
    const timer = setInterval(() => void refetch(), POLL_MS);
    return () => clearInterval(timer);
  }, [running, refetch]);
  return null;
}

function ImportListActions(): ReactElement {
  const canWrite = useCanWrite();
  return (
    <TopToolbar>
      <FilterButton />
      {canWrite ? <CreateButton label="Upload CDR file" icon={<UploadFileIcon />} /> : null}
    </TopToolbar>
  );
}

function ImportList(): ReactElement {
  return (
    <List
      empty={false}
      filters={importFilters}
      actions={<ImportListActions />}
      sort={{ field: 'created_at', order: 'DESC' }}
      perPage={25}
      // The list does not need each import's rejected lines.
      queryOptions={{
        meta: {
          sparseFields: [
            'id',
            'name',
            'state',
            'lines',
            'done',
            'accepted',
            'recorded',
            'rejected',
            'created_at',
            'started_at',
            'finished_at',
            'error',
          ],
        },
      }}
      aside={<CliHelp />}
    >
      <PollWhileRunning />
      <DataTable rowClick="show" bulkActionButtons={false}>
        <DataTable.Col source="name" label="File">
          <TextField source="name" data-testid="import-name" emptyText="(unnamed)" />
        </DataTable.Col>
        <DataTable.Col source="state" label="State">
          <StateChip />
        </DataTable.Col>
        <DataTable.Col source="done" label="Progress">
          <Progress />
        </DataTable.Col>
        <DataTable.NumberCol source="recorded" label="Recorded" />
        <DataTable.NumberCol source="rejected" label="Rejected" />
        <DataTable.Col source="started_at" label="Started">
          <UtcDateField source="started_at" />
        </DataTable.Col>
        <DataTable.Col source="finished_at" label="Finished">
          <UtcDateField source="finished_at" />
        </DataTable.Col>
      </DataTable>
    </List>
  );
}

const code = { fontFamily: 'monospace', bgcolor: 'action.hover', px: 0.5, borderRadius: 0.5 } as const;

/** The other way in: the command line (docs/IMPORTS.md). */
function CliHelp(): ReactElement {
  return (
    <Box sx={{ width: 260, ml: 2, mt: 8, flexShrink: 0 }}>
      <Typography variant="body2" color="text.secondary">
        Files can also be imported from the command line with{' '}
        <Box component="code" sx={code} data-testid="imports-command">
          npx rating import FILE
        </Box>{' '}
        (docs/IMPORTS.md). Uploading the same file again resumes an interrupted import; no call is charged twice.
      </Typography>
    </Box>
  );
}

/** Reads the shown import again while it runs. */
function PollShowWhileRunning(): null {
  const { record, refetch } = useShowContext<ImportRecord>();
  const running = record?.state === 'running';
  useEffect(() => {
    if (!running) return undefined;
    const timer = setInterval(() => void refetch(), POLL_MS);
    return () => clearInterval(timer);
  }, [running, refetch]);
  return null;
}

function Rejects(): ReactElement {
  const record = useRecordContext<ImportRecord>();
  const rejects = record?.rejects ?? [];
  if (rejects.length === 0) return <Typography variant="body2">No rejected lines.</Typography>;
  return (
    <>
      {record && record.rejected > rejects.length ? (
        <Typography variant="body2" color="text.secondary">
          First {rejects.length} of {record.rejected} rejected lines.
        </Typography>
      ) : null}
      <Table size="small" aria-label="Rejected lines" data-testid="import-rejects">
        <TableHead>
          <TableRow>
            <TableCell>Line</TableCell>
            <TableCell>Reason</TableCell>
            <TableCell>Account</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {rejects.map((r) => (
            <TableRow key={r.line}>
              <TableCell>{r.line}</TableCell>
              <TableCell>{r.reason}</TableCell>
              <TableCell>{r.account_tag ?? '—'}</TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </>
  );
}

function ImportShow(): ReactElement {
  return (
    <Show actions={<TopToolbar />}>
      <PollShowWhileRunning />
      <SimpleShowLayout>
        <TextField source="name" label="File" data-testid="import-name" emptyText="(unnamed)" />
        <Labeled label="State">
          <StateChip />
        </Labeled>
        <Labeled label="Progress">
          <Progress />
        </Labeled>
        <NumberField source="lines" label="Lines read" data-testid="import-lines" />
        <NumberField source="accepted" label="Valid lines" data-testid="import-accepted" />
        <NumberField source="recorded" label="Recorded" data-testid="import-recorded" />
        <NumberField source="rejected" label="Rejected" data-testid="import-rejected" />
        <TextField source="error" label="Error" data-testid="import-error" emptyText="—" />
        <UtcDateField source="created_at" label="First uploaded" />
        <UtcDateField source="started_at" label="Last run started" />
        <UtcDateField source="finished_at" label="Finished" />
        <TextField source="id" label="Import id" />
        <Labeled label="Rejected lines" fullWidth>
          <Rejects />
        </Labeled>
      </SimpleShowLayout>
    </Show>
  );
}

type Format = 'csv' | 'jsonl';
const CONTENT_TYPE: Record<Format, string> = { csv: 'text/csv', jsonl: 'application/x-ndjson' };
const formatOf = (fileName: string): Format => (/\.(jsonl|ndjson)$/i.test(fileName) ? 'jsonl' : 'csv');

/** The message of an error answer (the API's `{ errors: [{ message }] }`), or the HTTP status. */
async function errorMessage(response: Response): Promise<string> {
  if (response.status === 404) return 'The import upload endpoint is not available on this server (HTTP 404); use npx rating import FILE';
  try {
    const body = (await response.json()) as { errors?: Array<{ message?: string }>; message?: string };
    const message = body.errors?.[0]?.message ?? body.message;
    if (message) return `${message} (HTTP ${response.status})`;
  } catch {
    // not JSON
  }
  return `HTTP ${response.status} ${response.statusText}`.trim();
}

/** Upload form (the resource's create route): POST /v1/imports, then the import's page. */
function ImportUpload(): ReactElement {
  const canWrite = useCanWrite();
  const notify = useNotify();
  const redirect = useRedirect();
  const [file, setFile] = useState<File | null>(null);
  const [name, setName] = useState('');
  const [format, setFormat] = useState<Format>('csv');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const choose = (chosen: File | null) => {
    setFile(chosen);
    if (chosen) {
      setName(chosen.name);
      setFormat(formatOf(chosen.name));
    }
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!file || busy) return;
    setBusy(true);
    setError(null);
    const query = new URLSearchParams({ format });
    if (name.trim() !== '') query.set('name', name.trim());
    try {
      const response = await apiFetch(`/v1/imports?${query.toString()}`, {
        method: 'POST',
        headers: { 'content-type': CONTENT_TYPE[format], accept: 'application/json' },
        body: file,
      });
      if (!response.ok) throw new Error(await errorMessage(response));
      const answer = (await response.json()) as { import_id?: string };
      if (!answer.import_id) throw new Error('Unexpected answer from the import endpoint');
      notify('Import started', { type: 'success' });
      redirect('show', 'Import', answer.import_id);
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      setError(message);
      notify(`File not imported: ${message}`, { type: 'error' });
    } finally {
      setBusy(false);
    }
  };

  return (
    <Card sx={{ mt: 2 }}>
      <Title title="Upload a CDR file" />
      <CardContent>
        <Typography variant="h5" component="h1" gutterBottom>
          Upload a CDR file
        </Typography>
        {!canWrite ? (
          <Alert severity="info">Uploading call records needs a token with the write scope.</Alert>
        ) : (
          <Box component="form" onSubmit={submit} aria-label="Import upload" noValidate>
            <Stack spacing={2} sx={{ maxWidth: 520 }}>
              <Typography variant="body2" color="text.secondary">
                CSV with a header row, or JSON lines (one call per line): transaction_tag, account_tag, source, destination,
                timestamp_begin, timestamp_end and optional fields, as docs/IMPORTS.md describes. Calls are rated and charged as
                recordTransaction would; the same file uploaded again is the same import.
              </Typography>
              <Box>
                <Typography component="label" htmlFor="import-file" variant="body2" sx={{ display: 'block', mb: 0.5 }}>
                  CDR file
                </Typography>
                <input
                  id="import-file"
                  type="file"
                  accept=".csv,.jsonl,.ndjson,text/csv,application/x-ndjson"
                  onChange={(e) => choose(e.target.files?.[0] ?? null)}
                  data-testid="import-file"
                />
              </Box>
              <MuiTextField
                select
                id="import-format"
                label="Format"
                value={format}
                onChange={(e) => setFormat(e.target.value as Format)}
                slotProps={{ select: { native: true }, inputLabel: { shrink: true } }}
              >
                <option value="csv">CSV</option>
                <option value="jsonl">JSON lines</option>
              </MuiTextField>
              <MuiTextField
                id="import-name"
                label="Name"
                value={name}
                onChange={(e) => setName(e.target.value)}
                helperText="Shown in the list of imports"
              />
              <Box>
                <MuiButton type="submit" variant="contained" startIcon={<UploadFileIcon />} disabled={!file || busy}>
                  {busy ? 'Uploading…' : 'Upload file'}
                </MuiButton>
              </Box>
              {error ? (
                <Alert severity="error" data-testid="import-upload-error">
                  {error}
                </Alert>
              ) : null}
            </Stack>
          </Box>
        )}
      </CardContent>
    </Card>
  );
}

export const imports: ConsoleResource = {
  name: 'Import',
  list: ImportList,
  show: ImportShow,
  create: ImportUpload,
  icon: ImportExportIcon,
  options: { label: 'Imports' },
  recordRepresentation: 'name',
};
