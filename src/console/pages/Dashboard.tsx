import { lazy, Suspense, type ReactNode } from 'react';
import { Link, Title, useCreatePath, useLogoutIfAccessDenied } from 'react-admin';
import { useQuery } from '@tanstack/react-query';
import {
  Alert,
  Box,
  Button,
  Card,
  CardContent,
  CardHeader,
  Grid,
  Skeleton,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  Typography,
} from '@mui/material';
import { formatMinorUnits, toNumber } from '../components/money';
import type { Bucket } from './DashboardCharts';
import { gql } from '../graphql';

interface LowAccount {
  id: string;
  account_tag: string;
  name: string | null;
  balance: number | string;
  balance_alert_threshold: number | string | null;
}

interface QueueDepth {
  name: string;
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
}

export interface DashboardData {
  calls_per_minute: Bucket[];
  revenue_per_hour: Bucket[];
  running_calls: number;
  accounts_below_threshold: LowAccount[];
  accounts_below_threshold_count: number;
  queues: QueueDepth[];
  workers: number;
  generated_at: string;
}

const DASHBOARD_QUERY = /* GraphQL */ `
  query Dashboard {
    dashboard {
      calls_per_minute {
        start
        calls
        revenue
      }
      revenue_per_hour {
        start
        calls
        revenue
      }
      running_calls
      accounts_below_threshold {
        id
        account_tag
        name
        balance
        balance_alert_threshold
      }
      accounts_below_threshold_count
      queues {
        name
        waiting
        active
        delayed
        failed
      }
      workers
      generated_at
    }
  }
`;

const REFRESH_MS = 10_000;

/** recharts is large: loaded with the dashboard's charts, not with every page. */
const CallsPerMinute = lazy(() => import('./DashboardCharts').then((m) => ({ default: m.CallsPerMinute })));
const RevenuePerHour = lazy(() => import('./DashboardCharts').then((m) => ({ default: m.RevenuePerHour })));
const chartFallback = <Skeleton variant="rectangular" height={330} aria-label="Loading the chart" />;

function Stat({ label, value, testId, hint }: { label: string; value: ReactNode; testId: string; hint?: string }) {
  const id = `stat-${testId}`;
  return (
    <Card sx={{ height: '100%' }}>
      <CardContent>
        <Typography id={id} variant="overline" color="text.secondary">
          {label}
        </Typography>
        <Typography variant="h4" component="p" data-testid={testId} aria-labelledby={id} sx={{ fontVariantNumeric: 'tabular-nums' }}>
          {value}
        </Typography>
        {hint ? (
          <Typography variant="caption" color="text.secondary">
            {hint}
          </Typography>
        ) : null}
      </CardContent>
    </Card>
  );
}

function LowBalances({ accounts, total }: { accounts: LowAccount[]; total: number }) {
  const createPath = useCreatePath();
  return (
    <Card>
      <CardHeader
        title={`Accounts below their alert threshold (${total})`}
        slotProps={{ title: { variant: 'subtitle1', component: 'h2' } }}
      />
      <TableContainer>
        <Table size="small" aria-label="Accounts below their alert threshold">
          <TableHead>
            <TableRow>
              <TableCell>Account</TableCell>
              <TableCell>Name</TableCell>
              <TableCell align="right">Balance (minor units)</TableCell>
              <TableCell align="right">Threshold</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {accounts.length === 0 ? (
              <TableRow>
                <TableCell colSpan={4}>
                  <Typography color="text.secondary" variant="body2">
                    None: every account is above its threshold.
                  </Typography>
                </TableCell>
              </TableRow>
            ) : (
              accounts.map((a) => (
                <TableRow key={a.id} hover>
                  <TableCell>
                    <Link to={createPath({ resource: 'Account', type: 'show', id: a.id })}>{a.account_tag}</Link>
                  </TableCell>
                  <TableCell>{a.name ?? ''}</TableCell>
                  <TableCell align="right" sx={{ color: toNumber(a.balance) < 0 ? 'error.main' : undefined }}>
                    {formatMinorUnits(a.balance)}
                  </TableCell>
                  <TableCell align="right">
                    {a.balance_alert_threshold === null ? 'default' : formatMinorUnits(a.balance_alert_threshold)}
                  </TableCell>
                </TableRow>
              ))
            )}
          </TableBody>
        </Table>
      </TableContainer>
      {total > accounts.length ? (
        <CardContent>
          <Typography variant="caption" color="text.secondary">
            Showing {accounts.length} of {total}.
          </Typography>
        </CardContent>
      ) : null}
    </Card>
  );
}

function Queues({ queues, workers }: { queues: QueueDepth[]; workers: number }) {
  return (
    <Card>
      <CardHeader
        title="Queues"
        slotProps={{ title: { variant: 'subtitle1', component: 'h2' } }}
        subheader={`${workers} worker${workers === 1 ? '' : 's'} connected`}
      />
      <TableContainer>
        <Table size="small" aria-label="Queue depths">
          <TableHead>
            <TableRow>
              <TableCell>Queue</TableCell>
              <TableCell align="right">Waiting</TableCell>
              <TableCell align="right">Active</TableCell>
              <TableCell align="right">Delayed</TableCell>
              <TableCell align="right">Failed</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {queues.map((q) => (
              <TableRow key={q.name}>
                <TableCell>{q.name}</TableCell>
                <TableCell align="right">{q.waiting}</TableCell>
                <TableCell align="right">{q.active}</TableCell>
                <TableCell align="right">{q.delayed}</TableCell>
                <TableCell align="right" sx={{ color: q.failed > 0 ? 'error.main' : undefined }}>
                  {q.failed}
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </TableContainer>
    </Card>
  );
}

/** Live figures from the `dashboard` query, refreshed every 10 s. */
export function Dashboard() {
  const logoutIfAccessDenied = useLogoutIfAccessDenied();
  const { data, error, isPending, refetch, isFetching } = useQuery({
    queryKey: ['console', 'dashboard'],
    queryFn: async () => {
      try {
        return (await gql<{ dashboard: DashboardData }>(DASHBOARD_QUERY)).dashboard;
      } catch (e) {
        await logoutIfAccessDenied(e);
        throw e;
      }
    },
    refetchInterval: REFRESH_MS,
    retry: false,
  });

  return (
    <Box sx={{ mt: 1, mb: 2 }}>
      <Title title="Dashboard" />
      {error ? (
        <Alert
          severity="error"
          sx={{ mb: 2 }}
          action={
            <Button color="inherit" size="small" onClick={() => void refetch()} disabled={isFetching}>
              Retry
            </Button>
          }
        >
          The dashboard could not be loaded: {error instanceof Error ? error.message : String(error)}. It retries every 10 seconds.
        </Alert>
      ) : null}
      {isPending && !error ? <Skeleton variant="rectangular" height={120} aria-label="Loading the dashboard" /> : null}
      {data ? (
        <Grid container spacing={2}>
          <Grid size={{ xs: 12, sm: 4 }}>
            <Stat label="Calls running now" value={data.running_calls} testId="running-calls" />
          </Grid>
          <Grid size={{ xs: 12, sm: 4 }}>
            <Stat label="Workers" value={data.workers} testId="workers" />
          </Grid>
          <Grid size={{ xs: 12, sm: 4 }}>
            <Stat
              label="Accounts below threshold"
              value={data.accounts_below_threshold_count}
              testId="accounts-below-threshold"
              hint={`Updated ${new Date(data.generated_at).toLocaleTimeString()}`}
            />
          </Grid>
          <Grid size={{ xs: 12, lg: 6 }}>
            <Suspense fallback={chartFallback}>
              <CallsPerMinute data={data.calls_per_minute} />
            </Suspense>
          </Grid>
          <Grid size={{ xs: 12, lg: 6 }}>
            <Suspense fallback={chartFallback}>
              <RevenuePerHour data={data.revenue_per_hour} />
            </Suspense>
          </Grid>
          <Grid size={{ xs: 12, lg: 7 }}>
            <LowBalances accounts={data.accounts_below_threshold} total={data.accounts_below_threshold_count} />
          </Grid>
          <Grid size={{ xs: 12, lg: 5 }}>
            <Queues queues={data.queues} workers={data.workers} />
          </Grid>
        </Grid>
      ) : null}
    </Box>
  );
}
