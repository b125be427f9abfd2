/**
 * Call duration in whole seconds; a started second counts as a full one.
 * An end before or at the begin gives 0 (docs/DESIGN.md section 3).
 */
export function callDurationSeconds(begin: Date, end: Date): number {
  const b = begin.getTime();
  const e = end.getTime();
  // An invalid date must not silently rate a call as free.
  if (!Number.isFinite(b) || !Number.isFinite(e)) {
    throw new RangeError('callDurationSeconds: invalid date');
  }
  const ms = e - b;
  if (ms <= 0) return 0;
  // Integer arithmetic rather than Math.ceil(ms / 1000), to keep clear of float rounding.
  const rest = ms % 1000;
  return (ms - rest) / 1000 + (rest > 0 ? 1 : 0);
}
