import type { AppContext } from '../context';
import { jobId } from '../queues/names';
import { endCallJobOptions } from '../queues/queues';
import type { AlertJob, AlertKind } from '../queues/payloads';
import { withTimeout } from '../../infra/time-limit';

/**
 * Raising an alert must never hurt rating: enqueueAlert never throws and gives up after a short
 * time (a stuck Redis would otherwise hold the caller). Callers on a hot path use `void`.
 */
const ENQUEUE_TIMEOUT_MS = 2000;

/** The occurrence of an alert raised once for its call (AlertOptions.occurrence). */
export const ONCE = 'once';

export interface AlertOptions {
  /**
   * The condition's value. The last alerted value per (kind, account[, transaction]) is kept in
   * Redis; an alert whose condition equals it is skipped, so one condition does not alert twice
   * in a row.
   */
  condition: string;
  /** Alert even if the same condition was alerted last: the caller saw it start afresh (a crossing). */
  fresh?: boolean;
  /**
   * What makes this occurrence unique; part of the job id, so a retried caller enqueues it once. ONCE:
   * the alert is raised once for its call (with `call`), queued before it is remembered.
   */
  occurrence: string;
  /** How long the remembered condition lasts (default ALERT_REPEAT_SECONDS): after it, a reminder may go out. */
  rememberSeconds?: number;
  /**
   * For an alert about one call: its running entry's id. A transaction tag names no single call (a tag
   * rolled back is used again by a new call; a reseller's shares of two customers' calls may carry one
   * tag), so "once per call" remembers the condition per entry.
   */
  call?: string;
}

export function alertStateKey(
  ctx: AppContext,
  kind: AlertKind,
  accountTag: string,
  transactionTag: string | null,
  call: string | null = null,
): string {
  const parts = [kind, accountTag, ...(transactionTag === null ? [] : [transactionTag]), ...(call === null ? [] : [call])].map(
    encodeURIComponent,
  );
  return `${ctx.config.queuePrefix}:alert-state:${parts.join(':')}`;
}

/**
 * Compare-and-set of the remembered condition, atomic so that of two processes observing the same
 * condition at once only one alerts. A repeat leaves the expiry alone: the condition is forgotten
 * ALERT_REPEAT_SECONDS after it was last *alerted*, however often it is observed meanwhile.
 * KEYS[1] state key; ARGV: condition, seconds to remember, '1' to alert even on a repeat.
 */
const REMEMBER_CONDITION = `
  if ARGV[3] ~= '1' and redis.call('GET', KEYS[1]) == ARGV[1] then return 0 end
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
  return 1
`;

async function dedupeAndAdd(ctx: AppContext, alert: AlertJob, options: AlertOptions): Promise<boolean> {
  const key = alertStateKey(ctx, alert.kind, alert.account_tag, alert.transaction_tag, options.call ?? null);
  const ttl = options.rememberSeconds ?? ctx.config.alertRepeatSeconds;
  const id = jobId(
    'alert',
    alert.kind,
    alert.account_tag,
    alert.transaction_tag ?? '-',
    ...(options.call === undefined ? [] : [options.call]),
    options.condition,
    options.occurrence,
  );
  const add = () => ctx.queues.alerts.add(alert.kind, alert, { jobId: id, ...(alert.kind === 'END_CALL' ? endCallJobOptions : {}) });
  if (options.occurrence === ONCE) {
    // Once per call (END_CALL, LONG_RUNNING_CALL): the job's id is the same for every observer, so the
    // queue keeps one, and the condition is remembered only once the job is queued. Remembered first, a
    // queueing that never finished (a worker killed, a reply lost on a reconnect) silenced the call's
    // END_CALL for good, and the switch was never told to end it.
    if (!options.fresh && (await ctx.redis.get(key)) === options.condition) return false;
    await add();
    await ctx.redis.set(key, options.condition, 'EX', ttl);
    return true;
  }
  const remembered = await ctx.redis.eval(REMEMBER_CONDITION, 1, key, options.condition, ttl, options.fresh ? '1' : '0');
  if (remembered !== 1) return false;
  try {
    await add();
  } catch (err) {
    // Forget the condition again so the next observation retries instead of staying silent.
    await ctx.redis.del(key).catch(() => undefined);
    throw err;
  }
  return true;
}

/** Queues an alert unless it repeats the last one; resolves to whether it was queued. Never rejects. */
export async function enqueueAlert(ctx: AppContext, alert: AlertJob, options: AlertOptions): Promise<boolean> {
  const log = { kind: alert.kind, account_tag: alert.account_tag, transaction_tag: alert.transaction_tag };
  try {
    const result = await withTimeout(dedupeAndAdd(ctx, alert, options), ENQUEUE_TIMEOUT_MS);
    if (result === 'timeout') {
      ctx.logger.warn(log, 'alert not queued in time; dropped');
      return false;
    }
    ctx.logger.debug({ ...log, queued: result }, result ? 'alert queued' : 'alert repeats the last one; skipped');
    return result;
  } catch (err) {
    ctx.logger.warn({ ...log, err }, 'alert could not be queued; dropped');
    return false;
  }
}

/** Forgets the last alerted condition so the next occurrence alerts again. Never rejects. */
export async function rearmAlert(
  ctx: AppContext,
  kind: AlertKind,
  accountTag: string,
  transactionTag: string | null = null,
): Promise<void> {
  try {
    await withTimeout(ctx.redis.del(alertStateKey(ctx, kind, accountTag, transactionTag)), ENQUEUE_TIMEOUT_MS);
  } catch (err) {
    ctx.logger.warn({ kind, account_tag: accountTag, err }, 'alert could not be re-armed');
  }
}
