/**
 * `work`'s value or error, or `'timeout'` once `ms` have passed without either: for the steps that must
 * not wait on a store for good (Redis unreachable: ioredis holds a command while it reconnects). The
 * work goes on; a late error is handled here, not left unhandled. The timer never keeps a process alive.
 */
export function withTimeout<T>(work: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), Math.max(0, ms));
    timer.unref();
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** `work`'s value, or the rejection `failure()` makes once `ms` have passed without one (withTimeout's rules). */
export async function withinOrFail<T>(work: Promise<T>, ms: number, failure: () => Error): Promise<T> {
  const result = await withTimeout(work, ms);
  if (result === 'timeout') throw failure();
  return result;
}
