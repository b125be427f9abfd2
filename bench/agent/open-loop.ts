import type { AppContext } from '../../src/shared/domain/context';
import { sleep } from '../../src/shared/infra/services/process-tools';
import type { AgentClient, Answer } from './client';
import { CpuMeter } from './processes';
import { ErrorCounts, latencyLine, ms, percentile } from './stats';

/**
 * One open-loop step: `cps` new calls per second for `seconds`, on a fixed schedule by absolute time
 * (call i starts at t0 + i/cps whatever the answers do; a late timer starts every call already due,
 * so lateness never lowers the offered rate). Each call is what a SIP proxy does: authorization with
 * the call's transaction_tag, begin, hold `hold` s +-50 %, end.
 */
export interface StepOptions {
  label: string;
  cps: number;
  seconds: number;
  hold: number;
  /** Unique per step: the calls' transaction tags start with it. */
  tagPrefix: string;
  pickAccount: () => string;
}

export interface StepResult {
  cps: number;
  offered: number;
  completed: number;
  achieved: number;
  auth: number[];
  begin: number[];
  end: number[];
  lag: number[];
  errors: ErrorCounts;
  /** p99 of authorization and begin below 50 ms, and no error. */
  held: boolean;
  lines: string[];
}

export const P99_LIMIT_MS = 50;

const destinations = ['39', '44', '49', '33'];
const digits = (n: number) => String(Math.floor(Math.random() * 10 ** n)).padStart(n, '0');

export async function runStep(ctx: AppContext, client: AgentClient, meter: CpuMeter, o: StepOptions): Promise<StepResult> {
  const total = Math.max(1, Math.round(o.cps * o.seconds));
  const interval = 1000 / o.cps;
  const auth: number[] = [];
  const begin: number[] = [];
  const end: number[] = [];
  const lateness: number[] = [];
  const errors = new ErrorCounts();
  /** Calls whose end was answered ok: when (epoch ms), by account/tag. */
  const ended = new Map<string, number>();
  const startedAt: number[] = [];
  const stepStartWall = Date.now();

  const failed = (op: string, a: Answer): boolean => {
    if (a.error) {
      errors.add(`${op}: ${a.error}`);
      return true;
    }
    const body = a.body!;
    const refused = op === 'authorization' ? body.authorized !== true : body.ok !== true;
    if (refused) errors.add(`${op}: ${String((op === 'authorization' ? body.unauthorized_reason : body.reason) ?? 'refused')}`);
    return refused;
  };

  const call = async (i: number) => {
    const account_tag = o.pickAccount();
    const transaction_tag = `${o.tagPrefix}-${i}`;
    const destination = destinations[i % destinations.length] + digits(8);
    const source = `3220${digits(7)}`;
    const a = await client.post('/v1/authorization', { transaction_tag, account_tag, source, destination });
    auth.push(a.ms);
    if (failed('authorization', a)) return;
    const b = await client.post('/v1/begin_transaction', { transaction_tag, account_tag, source, destination });
    begin.push(b.ms);
    if (failed('begin', b)) return;
    await sleep(o.hold * 1000 * (0.5 + Math.random()));
    const e = await client.post('/v1/end_transaction', { transaction_tag, account_tag });
    end.push(e.ms);
    if (failed('end', e)) return;
    ended.set(`${account_tag}/${transaction_tag}`, Date.now());
  };

  meter.reset();
  const redisBefore = await redisTraffic(ctx);
  const mongoBefore = await mongoCommands(ctx);
  const calls: Promise<void>[] = [];
  const t0 = performance.now() + 20;
  await new Promise<void>((resolve) => {
    let i = 0;
    const tick = () => {
      const now = performance.now();
      while (i < total && t0 + i * interval <= now) {
        lateness.push(now - (t0 + i * interval));
        startedAt.push(now);
        calls.push(call(i++));
      }
      if (i >= total) resolve();
      else setTimeout(tick, Math.max(0, t0 + i * interval - performance.now()));
    };
    setTimeout(tick, 20);
  });
  await Promise.all(calls);
  const callsDone = performance.now();
  const startSpan = (startedAt[startedAt.length - 1] - startedAt[0] + interval) / 1000;
  const completed = ended.size;

  // Drain: processing of the ended calls, then when each was charged (its ledger entry's `at`).
  const charged = await waitForCharges(ctx, stepStartWall, ended);
  const drainSeconds = (performance.now() - callsDone) / 1000;
  const lag: number[] = [];
  for (const [key, endAt] of ended) {
    const at = charged.get(key);
    if (at === undefined) errors.add('not charged within the drain timeout');
    else lag.push(at - endAt);
  }
  const cpu = meter.perUnit(completed, 'call');
  const redis = trafficPerCall(redisBefore, await redisTraffic(ctx), completed);
  const mongoAfter = await mongoCommands(ctx);
  const mongo =
    mongoBefore === null || mongoAfter === null || completed === 0
      ? 'mongo: commands per call n/a (not the embedded MongoDB-wire server)'
      : mongoPerCall(mongoBefore, mongoAfter, completed);

  const achieved = completed / startSpan;
  const held = percentile(auth, 99) < P99_LIMIT_MS && percentile(begin, 99) < P99_LIMIT_MS && errors.total === 0;
  const lines = [
    `${o.label}: offered ${o.cps} calls/s for ${o.seconds} s, hold ${o.hold} s +-50 %: achieved ${achieved.toFixed(1)} calls/s (${completed} of ${total} calls completed) -> ${held ? 'held' : 'NOT held'}`,
    `  authorization ${latencyLine(auth)}; begin ${latencyLine(begin)}; end ${latencyLine(end)}`,
    `  errors: ${errors}; processing lag (end answered -> charged) p50 ${ms(percentile(lag, 50))} / p99 ${ms(percentile(lag, 99))} ms; drain ${drainSeconds.toFixed(1)} s; bench start lateness p99 ${ms(percentile(lateness, 99))} ms`,
    `  ${cpu}`,
    `  ${redis}; ${mongo}`,
  ];
  return { cps: o.cps, offered: total, completed, achieved, auth, begin, end, lag, errors, held, lines };
}

/**
 * What redis-server counted so far (INFO stats): commands, and reads of client sockets. A read takes in
 * whatever a client sent since the last one, so commands pipelined together are one read: the reads are
 * the round trips the clients made. Every process of the service is counted (the maintenance queue's
 * jobs and BullMQ's timers included), and the bench's own few queries during the drain.
 */
async function redisTraffic(ctx: AppContext): Promise<{ commands: number; reads: number }> {
  const info = String(await ctx.redis.info('stats'));
  const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? NaN);
  return { commands: field('total_commands_processed'), reads: field('total_reads_processed') };
}

interface MongoCommandCounts {
  total: number;
  byKind: Map<string, number>;
}

/**
 * Commands the embedded MongoDB-wire server received so far (its serverStatus's `ratingCommands`), and
 * by kind ("command collection", `ratingCommandsByKind`); null from another server.
 */
async function mongoCommands(ctx: AppContext): Promise<MongoCommandCounts | null> {
  const status = await ctx.mongo.db.admin().command({ serverStatus: 1 });
  const n: unknown = status.ratingCommands;
  if (typeof n !== 'number' && typeof n !== 'bigint') return null;
  const byKind = new Map<string, number>(
    Object.entries((status.ratingCommandsByKind ?? {}) as Record<string, number>).map(([k, v]) => [k, Number(v)]),
  );
  return { total: Number(n), byKind };
}

/** Commands per call between two readings, the kinds that sent at least 0.05 a call, most first. */
function mongoPerCall(before: MongoCommandCounts, after: MongoCommandCounts, calls: number): string {
  const kinds = [...after.byKind]
    .map(([kind, n]) => [kind, (n - (before.byKind.get(kind) ?? 0)) / calls] as const)
    .filter(([, perCall]) => perCall >= 0.05)
    .sort((a, b) => b[1] - a[1])
    .map(([kind, perCall]) => `${kind} ${perCall.toFixed(2)}`);
  return `mongo: ${((after.total - before.total) / calls).toFixed(2)} commands per call (every client: agent, workers, maintenance, the bench's drain queries; ${kinds.join(', ')})`;
}

function trafficPerCall(before: { commands: number; reads: number }, after: { commands: number; reads: number }, calls: number): string {
  if (calls === 0) return 'redis: no call completed';
  const per = (n: number) => (n / calls).toFixed(2);
  return `redis: ${per(after.reads - before.reads)} round trips (socket reads), ${per(after.commands - before.commands)} commands (those inside scripts included) per call`;
}

/**
 * When each ended call was charged. Method: the ledger entry of the call's charge (`charge:<record>`,
 * src/shared/domain/ledger) carries `at`, stamped by the worker with the balance debit; the record is marked
 * 'charged' right after. Waits for the processing queue to empty, then reads the step's entries
 * (once more every 250 ms while some are missing, up to 30 s).
 */
async function waitForCharges(ctx: AppContext, sinceWall: number, ended: Map<string, number>): Promise<Map<string, number>> {
  const charged = new Map<string, number>();
  const until = Date.now() + 60_000;
  for (;;) {
    const counts = await ctx.queues.processing.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'paused');
    if (Object.values(counts).every((n) => n === 0) || Date.now() > until) break;
    await sleep(100);
  }
  const readUntil = Date.now() + 30_000;
  for (;;) {
    const entries = await ctx.mongo.collections.ledger
      .find({ kind: 'charge', at: { $gte: new Date(sinceWall - 1000) } }, { projection: { account_tag: 1, transaction_tag: 1, at: 1 } })
      .toArray();
    for (const e of entries) {
      const key = `${e.account_tag}/${e.transaction_tag}`;
      if (ended.has(key)) charged.set(key, e.at.getTime());
    }
    if (charged.size >= ended.size || Date.now() > readUntil) return charged;
    await sleep(250);
  }
}
