/**
 * Milliseconds spent per named phase of one piece of work (an import batch, a settlement), for its
 * debug log: bench:import --profile sums them to show where an import's time goes.
 */
export function phaseClock() {
  const phases: Record<string, number> = {};
  let last = performance.now();
  return {
    phases,
    lap(name: string) {
      const now = performance.now();
      phases[name] = Math.round(((phases[name] ?? 0) + now - last) * 10) / 10;
      last = now;
    },
  };
}

export type PhaseClock = ReturnType<typeof phaseClock>;
