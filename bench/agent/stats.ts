/** Small numeric helpers of bench:agent. */

/** The median of unsorted values (the mean of the middle two for an even count). */
export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** The p-th percentile (nearest rank) of unsorted values; NaN when there are none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export function max(values: number[]): number {
  let m = -Infinity;
  for (const v of values) if (v > m) m = v;
  return values.length ? m : NaN;
}

export const ms = (v: number): string => (Number.isFinite(v) ? v.toFixed(1) : 'n/a');

/** `p50 a / p99 b / max c ms` of a latency list. */
export function latencyLine(values: number[]): string {
  return `p50 ${ms(percentile(values, 50))} / p99 ${ms(percentile(values, 99))} / max ${ms(max(values))} ms`;
}

/** Error counts by kind. */
export class ErrorCounts {
  readonly byKind = new Map<string, number>();
  add(kind: string, n = 1): void {
    this.byKind.set(kind, (this.byKind.get(kind) ?? 0) + n);
  }
  get total(): number {
    let t = 0;
    for (const n of this.byKind.values()) t += n;
    return t;
  }
  toString(): string {
    if (this.byKind.size === 0) return 'none';
    return [...this.byKind]
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
  }
}
