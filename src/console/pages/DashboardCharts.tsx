import type { ReactNode } from 'react';
import { Card, CardContent, CardHeader, Typography } from '@mui/material';
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { formatMinorUnits, toNumber } from '../components/money';

/** The dashboard's charts (recharts), in a chunk of their own: see Dashboard.tsx. */

export interface Bucket {
  start: string;
  calls: number;
  revenue: number | string;
}

const timeOf = (iso: string) => new Date(iso).toISOString().slice(11, 16);
const hourOf = (iso: string) => `${new Date(iso).toISOString().slice(11, 13)}:00`;

function ChartCard({ title, children, empty }: { title: string; children: ReactNode; empty: boolean }) {
  return (
    <Card>
      <CardHeader title={title} slotProps={{ title: { variant: 'subtitle1', component: 'h2' } }} />
      <CardContent sx={{ height: 260, pt: 0 }} role="figure" aria-label={title}>
        {empty ? <Typography color="text.secondary">No calls in this period.</Typography> : children}
      </CardContent>
    </Card>
  );
}

export function CallsPerMinute({ data }: { data: Bucket[] }) {
  const points = data.map((b) => ({ time: timeOf(b.start), calls: b.calls }));
  return (
    <ChartCard title="Calls per minute, UTC (last hour)" empty={points.length === 0}>
      <ResponsiveContainer width="100%" height="100%">
        <BarChart data={points} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis dataKey="time" minTickGap={24} />
          <YAxis allowDecimals={false} width={48} />
          <Tooltip />
          <Bar dataKey="calls" name="Calls" fill="#1976d2" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </ChartCard>
  );
}

export function RevenuePerHour({ data }: { data: Bucket[] }) {
  const points = data.map((b) => ({ hour: hourOf(b.start), revenue: toNumber(b.revenue), calls: b.calls }));
  return (
    <ChartCard title="Revenue per hour, minor units, UTC (last 24 h)" empty={points.length === 0}>
      <ResponsiveContainer width="100%" height="100%">
        <BarChart data={points} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis dataKey="hour" minTickGap={16} />
          <YAxis width={64} tickFormatter={(v: number) => formatMinorUnits(Math.round(v))} />
          <Tooltip formatter={(v) => formatMinorUnits(Math.round(Number(v)))} />
          <Bar dataKey="revenue" name="Revenue (minor units)" fill="#2e7d32" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </ChartCard>
  );
}
