/** The index of the first of the ascending `values` greater than `after` (`values.length` when none is): a binary search. */
export function firstIndexAfter(values: readonly number[], after: number): number {
  let lo = -1;
  let hi = values.length;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (values[mid] > after) hi = mid;
    else lo = mid;
  }
  return hi;
}
