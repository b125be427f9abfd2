import { useEffect, useState, type FormEvent, type ReactElement } from 'react';
import UploadFileIcon from '@mui/icons-material/UploadFile';
import {
  Alert,
  Box,
  Button,
  Card,
  CardContent,
  Checkbox,
  FormControlLabel,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  TextField,
  Typography,
} from '@mui/material';
import { Title, useNotify } from 'react-admin';
import { useCanWrite } from '../auth/permissions';
import { apiFetch, gql } from '../graphql';
import { formatUtcInput, parseUtcInput } from './resource-helpers';
import type { ConsolePage } from './types';

/**
 * Rate deck upload: a carrier's price list as CSV, applied to one pricelist and carrier from an
 * effective date-time (POST /v1/rate-decks, body text/csv). A dry run reports what would change
 * and changes nothing. Writers only.
 */

/** The answer of POST /v1/rate-decks. */
interface DeckResult {
  added: number;
  changed: number;
  unchanged: number;
  removed: number;
  rejected: Array<{ line: number; reason: string }>;
  rejected_count: number;
  dry_run: boolean;
  effective: string;
  /** Present when no rate was removed because a line could not be read: why. */
  removals_skipped?: string;
}

interface Choices {
  pricelists: Array<{ pricelist_tag: string; name: string | null; currency: string }>;
  carriers: Array<{ carrier_tag: string; active: boolean }>;
}

const CHOICES_QUERY = /* GraphQL */ `
  query RateDeckChoices {
    allPricelists(perPage: 1000, sortField: "pricelist_tag", sortOrder: "ASC") {
      pricelist_tag
      name
      currency
    }
    allCarriers(perPage: 1000, sortField: "carrier_tag", sortOrder: "ASC") {
      carrier_tag
      active
    }
  }
`;

/** The message of an error answer: the API's `{ errors: [{ message }] }`, else `{ message }` or the HTTP status. */
async function errorMessage(response: Response): Promise<string> {
  // Unknown pricelists and carriers answer 400; a 404 means the server has no such route.
  if (response.status === 404) return 'The rate deck endpoint is not available on this server (HTTP 404)';
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { errors?: Array<{ message?: string }>; message?: string; error?: string };
    const message = body.errors?.[0]?.message ?? body.message ?? body.error;
    if (message) return `${message} (HTTP ${response.status})`;
  } catch {
    // not JSON
  }
  return `HTTP ${response.status} ${response.statusText}`.trim();
}

function isDeckResult(value: unknown): value is DeckResult {
  const v = value as Partial<DeckResult> | null;
  return !!v && typeof v.added === 'number' && typeof v.changed === 'number' && Array.isArray(v.rejected);
}

function RateDeckForm(): ReactElement {
  const notify = useNotify();
  const [choices, setChoices] = useState<Choices | null>(null);
  const [choicesError, setChoicesError] = useState<string | null>(null);
  const [pricelistTag, setPricelistTag] = useState('');
  const [carrierTag, setCarrierTag] = useState('');
  const [effective, setEffective] = useState(() => formatUtcInput(new Date()));
  const [dryRun, setDryRun] = useState(false);
  const [file, setFile] = useState<File | null>(null);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<DeckResult | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    gql<{ allPricelists: Choices['pricelists'] | null; allCarriers: Choices['carriers'] | null }>(CHOICES_QUERY)
      .then((data) => {
        if (!live) return;
        const loaded = { pricelists: data.allPricelists ?? [], carriers: data.allCarriers ?? [] };
        setChoices(loaded);
        if (loaded.pricelists.length === 1) setPricelistTag(loaded.pricelists[0].pricelist_tag);
        if (loaded.carriers.length === 1) setCarrierTag(loaded.carriers[0].carrier_tag);
      })
      .catch((e: unknown) => {
        if (live) setChoicesError(e instanceof Error ? e.message : String(e));
      });
    return () => {
      live = false;
    };
  }, []);

  const effectiveIso = parseUtcInput(effective);
  const ready = !!pricelistTag && !!carrierTag && !!file && !!effectiveIso && !busy;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!ready || !file || !effectiveIso) return;
    setBusy(true);
    setError(null);
    setResult(null);
    const query = new URLSearchParams({
      pricelist_tag: pricelistTag,
      carrier_tag: carrierTag,
      effective: effectiveIso,
      dry_run: String(dryRun),
    });
    try {
      const response = await apiFetch(`/v1/rate-decks?${query.toString()}`, {
        method: 'POST',
        headers: { 'content-type': 'text/csv', accept: 'application/json' },
        body: file,
      });
      if (!response.ok) throw new Error(await errorMessage(response));
      const body: unknown = await response.json();
      if (!isDeckResult(body)) throw new Error('Unexpected answer from the rate deck endpoint');
      setResult(body);
      notify(body.dry_run ? 'Dry run done: nothing was changed' : 'Rate deck imported', {
        type: body.rejected_count > 0 ? 'warning' : 'success',
      });
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      setError(message);
      notify(`Rate deck not imported: ${message}`, { type: 'error' });
    } finally {
      setBusy(false);
    }
  };

  return (
    <Box component="form" onSubmit={submit} aria-label="Rate deck upload" noValidate>
      <Stack spacing={2} sx={{ maxWidth: 520 }}>
        {choicesError ? <Alert severity="error">Pricelists and carriers could not be loaded: {choicesError}</Alert> : null}
        <TextField
          select
          id="deck-pricelist"
          label="Pricelist"
          value={pricelistTag}
          onChange={(e) => setPricelistTag(e.target.value)}
          required
          disabled={!choices}
          slotProps={{ select: { native: true }, inputLabel: { shrink: true } }}
        >
          <option value="">{choices ? 'Choose a pricelist' : 'Loading…'}</option>
          {choices?.pricelists.map((p) => (
            <option key={p.pricelist_tag} value={p.pricelist_tag}>
              {p.pricelist_tag}
              {p.name ? ` (${p.name})` : ''} · {p.currency}
            </option>
          ))}
        </TextField>
        <TextField
          select
          id="deck-carrier"
          label="Carrier"
          value={carrierTag}
          onChange={(e) => setCarrierTag(e.target.value)}
          required
          disabled={!choices}
          slotProps={{ select: { native: true }, inputLabel: { shrink: true } }}
        >
          <option value="">{choices ? 'Choose a carrier' : 'Loading…'}</option>
          {choices?.carriers.map((c) => (
            <option key={c.carrier_tag} value={c.carrier_tag}>
              {c.carrier_tag}
              {c.active ? '' : ' (inactive)'}
            </option>
          ))}
        </TextField>
        <TextField
          id="deck-effective"
          type="datetime-local"
          label="Effective from (UTC)"
          value={effective}
          onChange={(e) => setEffective(e.target.value)}
          required
          helperText="New and changed rates apply from this moment; the terms they replace end there"
          slotProps={{ inputLabel: { shrink: true } }}
        />
        <FormControlLabel
          control={<Checkbox checked={dryRun} onChange={(e) => setDryRun(e.target.checked)} />}
          label="Dry run (report what would change, change nothing)"
        />
        <Box>
          <Typography component="label" htmlFor="deck-file" variant="body2" sx={{ display: 'block', mb: 0.5 }}>
            Rate deck CSV
          </Typography>
          <input
            id="deck-file"
            name="deck-file"
            type="file"
            accept=".csv,text/csv"
            onChange={(e) => setFile(e.target.files?.[0] ?? null)}
            data-testid="deck-file"
          />
        </Box>
        <Box>
          <Button type="submit" variant="contained" startIcon={<UploadFileIcon />} disabled={!ready}>
            {busy ? 'Importing…' : 'Import deck'}
          </Button>
        </Box>
        {error ? (
          <Alert severity="error" data-testid="deck-error">
            {error}
          </Alert>
        ) : null}
      </Stack>
      {result ? <DeckResultView result={result} /> : null}
    </Box>
  );
}

function Count({ label, value, testId }: { label: string; value: number; testId: string }): ReactElement {
  return (
    <Box sx={{ minWidth: 96 }}>
      <Typography variant="caption" color="text.secondary" component="div">
        {label}
      </Typography>
      <Typography variant="h5" component="div" data-testid={testId}>
        {value}
      </Typography>
    </Box>
  );
}

function DeckResultView({ result }: { result: DeckResult }): ReactElement {
  return (
    <Box sx={{ mt: 3 }} data-testid="deck-result" aria-live="polite">
      <Typography variant="h6" component="h2">
        {result.dry_run ? 'Dry run: nothing was changed' : 'Imported'}
      </Typography>
      <Typography variant="body2" color="text.secondary" data-testid="deck-effective">
        Effective {result.effective}
      </Typography>
      <Stack direction="row" spacing={3} sx={{ my: 2 }}>
        <Count label="Added" value={result.added} testId="deck-added" />
        <Count label="Changed" value={result.changed} testId="deck-changed" />
        <Count label="Unchanged" value={result.unchanged} testId="deck-unchanged" />
        <Count label="Removed" value={result.removed} testId="deck-removed" />
        <Count label="Rejected" value={result.rejected_count} testId="deck-rejected" />
      </Stack>
      {result.removals_skipped ? (
        <Alert severity="warning" data-testid="deck-removals-skipped" sx={{ mb: 2 }}>
          {result.removals_skipped}
        </Alert>
      ) : null}
      {result.rejected.length > 0 ? (
        <>
          <Typography variant="subtitle1" component="h3">
            Rejected lines
            {result.rejected_count > result.rejected.length ? ` (first ${result.rejected.length} of ${result.rejected_count})` : ''}
          </Typography>
          <Table size="small" aria-label="Rejected lines" data-testid="deck-rejected-lines" sx={{ maxWidth: 800 }}>
            <TableHead>
              <TableRow>
                <TableCell>Line</TableCell>
                <TableCell>Reason</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {result.rejected.map((r) => (
                <TableRow key={`${r.line}-${r.reason}`}>
                  <TableCell>{r.line}</TableCell>
                  <TableCell>{r.reason}</TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </>
      ) : null}
    </Box>
  );
}

function RateDecksPage(): ReactElement {
  const canWrite = useCanWrite();
  return (
    <Card sx={{ mt: 2 }}>
      <Title title="Rate decks" />
      <CardContent>
        <Typography variant="h5" component="h1" gutterBottom>
          Import a rate deck
        </Typography>
        {canWrite ? (
          <RateDeckForm />
        ) : (
          <Alert severity="info" data-testid="deck-read-only">
            Importing a rate deck needs a token with the write scope.
          </Alert>
        )}
      </CardContent>
    </Card>
  );
}

export const rateDecks: ConsolePage = {
  path: 'rate-decks',
  label: 'Rate decks',
  element: <RateDecksPage />,
  icon: UploadFileIcon,
};
