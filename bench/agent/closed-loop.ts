import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { OperationResult, TransactionJob } from '../../src/shared/domain/calls';
import { createQueues } from '../../src/shared/domain/queues/queues';
import { ReplyInbox, request } from '../../src/shared/infra/replies';
import { createRedis } from '../../src/shared/infra/redis';
import type { AgentClient } from './client';
import { ErrorCounts, latencyLine, percentile } from './stats';

/** Runs `count` tasks, `concurrency` at a time, each started as soon as one finishes (closed loop). */
async function closed(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      for (let i = next++; i < count; i = next++) await task(i);
    }),
  );
  return (performance.now() - started) / 1000;
}

export interface ClosedResult {
  pairsPerSecond: number;
  opsPerSecond: number;
  begin: number[];
  end: number[];
  ops: number[];
  errors: ErrorCounts;
}

/** begin+end pairs through the agent's REST mirror, `concurrency` pairs in flight (as bench:agent always did). */
export async function closedLoop(
  client: AgentClient,
  pairs: number,
  concurrency: number,
  tagPrefix: string,
  accountOf: (i: number) => string,
): Promise<ClosedResult> {
  const begin: number[] = [];
  const end: number[] = [];
  const errors = new ErrorCounts();
  const check = (op: string, a: { error?: string; body?: Record<string, unknown> }) => {
    if (a.error) errors.add(`${op}: ${a.error}`);
    else if (a.body!.ok !== true) errors.add(`${op}: ${String(a.body!.reason)}`);
    else return true;
    return false;
  };
  const seconds = await closed(pairs, concurrency, async (i) => {
    const call = { transaction_tag: `${tagPrefix}-${i}`, account_tag: accountOf(i) };
    const b = await client.post('/v1/begin_transaction', { ...call, source: '3220000000', destination: '393212345' });
    begin.push(b.ms);
    if (!check('begin', b)) return;
    const e = await client.post('/v1/end_transaction', call);
    end.push(e.ms);
    check('end', e);
  });
  return {
    pairsPerSecond: pairs / seconds,
    opsPerSecond: (begin.length + end.length) / seconds,
    begin,
    end,
    ops: [...begin, ...end],
    errors,
  };
}

export interface FloorResult {
  perSecond: number;
  latency: number[];
  errors: ErrorCounts;
}

/**
 * HTTP alone: `GET /health` on the agent from the same client at the same concurrency, an answer with
 * nothing behind it (no body to parse or validate, no queue, no store), so a lower bound on what the
 * HTTP part of any agent operation costs.
 */
export function httpFloor(client: AgentClient, count: number, concurrency: number): Promise<FloorResult> {
  return floorRun(count, concurrency, async (errors) => {
    const a = await client.get('/health');
    if (a.error) errors.add(`health: ${a.error}`);
    return a.ms;
  });
}

/** `count` operations, `concurrency` in flight; `task` runs one, counts its errors and returns its latency in ms. */
async function floorRun(count: number, concurrency: number, task: (errors: ErrorCounts) => Promise<number>): Promise<FloorResult> {
  const latency: number[] = [];
  const errors = new ErrorCounts();
  const seconds = await closed(count, concurrency, async () => {
    latency.push(await task(errors));
  });
  return { perSecond: count / seconds, latency, errors };
}

/**
 * The bare queue round trip: no-op jobs (`{ op: 'noop' }`, answered at once by the workers) from this
 * process through the agent's own request path: `request()` and a ReplyInbox (src/shared/infra/
 * replies.ts) on the `transactions` queue, created as the agent creates them.
 */
export class BareRoundTrip {
  private readonly connection;
  private readonly queues;
  private readonly inbox: ReplyInbox;

  constructor(
    redisUrl: string,
    private readonly prefix: string,
    logger: Logger,
    private readonly timeoutMs: number,
  ) {
    this.connection = createRedis(redisUrl);
    this.connection.on('error', () => undefined);
    this.queues = createQueues(this.connection, prefix);
    const subscriber = createRedis(redisUrl);
    subscriber.on('error', () => undefined);
    this.inbox = new ReplyInbox(subscriber, prefix, logger);
  }

  async start(): Promise<void> {
    await this.inbox.start();
  }

  run(count: number, concurrency: number): Promise<FloorResult> {
    return floorRun(count, concurrency, async (errors) => {
      const started = performance.now();
      try {
        const job: TransactionJob = { op: 'noop', deadline: Date.now() + this.timeoutMs };
        const answer = await request<TransactionJob, OperationResult>(
          this.queues.transactions,
          this.inbox,
          'noop',
          job,
          randomUUID(),
          this.timeoutMs,
        );
        if (!answer?.ok) errors.add(`noop: ${answer?.reason ?? 'no answer'}`);
      } catch (err) {
        errors.add(`noop: ${(err as Error).constructor.name}`);
      }
      return performance.now() - started;
    });
  }

  async close(): Promise<void> {
    await this.inbox.close().catch(() => undefined);
    await this.queues.close().catch(() => undefined);
    await this.connection.quit().catch(() => this.connection.disconnect());
  }
}

/** CPU ms (all processes, the bench's included) per unit of each measurement. */
export interface CpuPerUnit {
  pair: number;
  roundTrip: number;
  httpRequest: number;
}

export function closedLines(
  c: ClosedResult,
  bare: FloorResult,
  http: FloorResult,
  cpu: CpuPerUnit,
  pairs: number,
  concurrency: number,
): string[] {
  const ratio = c.opsPerSecond / bare.perSecond;
  // On saturated cores throughput is cores / CPU per unit, so an operation that costs at least one
  // round trip plus one HTTP request gets at most roundTrip / (roundTrip + httpRequest) of the bare rate.
  const ceiling = cpu.roundTrip / (cpu.roundTrip + cpu.httpRequest);
  return [
    `closed loop: ${pairs} begin+end pairs at concurrency ${concurrency}: ${c.pairsPerSecond.toFixed(1)} pairs/s = ${c.opsPerSecond.toFixed(0)} agent operations/s; begin ${latencyLine(c.begin)}; end ${latencyLine(c.end)}; all operations p50 ${percentile(c.ops, 50).toFixed(1)} / p99 ${percentile(c.ops, 99).toFixed(1)} ms; errors: ${c.errors}`,
    `bare queue round trip (noop jobs via request() + ReplyInbox on the transactions queue, from the bench process): ${bare.latency.length} at concurrency ${concurrency}: ${bare.perSecond.toFixed(0)} round trips/s; ${latencyLine(bare.latency)}; errors: ${bare.errors}`,
    `HTTP alone (GET /health on the agent, same client and concurrency): ${http.latency.length}: ${http.perSecond.toFixed(0)} requests/s; ${latencyLine(http.latency)}; errors: ${http.errors}`,
    `ratio: agent operations/s / bare round trips/s = ${c.opsPerSecond.toFixed(0)} / ${bare.perSecond.toFixed(0)} = ${ratio.toFixed(2)}`,
    `ceiling of that ratio for an operation answered over HTTP through one round trip and doing nothing else: CPU per round trip ${cpu.roundTrip.toFixed(3)} ms / (${cpu.roundTrip.toFixed(3)} + ${cpu.httpRequest.toFixed(3)} ms per HTTP request) = ${ceiling.toFixed(2)}; agent operation ${(cpu.pair / 2).toFixed(3)} ms`,
  ];
}
