/** Shared by the benchmarks that pick accounts (bench:agent, bench:import). */

/**
 * Which account places a call: Zipf (s = 1) over `count` accounts (a few
 * trunks place most calls, most accounts a few). Index 0 is the busiest.
 */
export function zipfPicker(count: number, s = 1): () => number {
  const cdf = new Float64Array(count);
  let sum = 0;
  for (let k = 0; k < count; k++) cdf[k] = sum += 1 / (k + 1) ** s;
  return () => {
    const x = Math.random() * sum;
    let lo = 0;
    let hi = count - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}
