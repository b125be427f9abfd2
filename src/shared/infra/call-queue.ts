import type { Socket } from 'node:net';
import { isCluster, type RedisClient } from './redis';

/**
 * The call queue: how the agent's real-time operations (authorization, begin, end, record, rollback)
 * reach a worker and how their answers come back (issue 36; docs/ARCHITECTURE.md, "The call queue").
 *
 * One Redis list per deployment. The agent `LPUSH`es a job; a worker's slot, blocked in `BLMOVE` on the
 * list, takes it into a list of its own (the job it holds), decides it in MongoDB, and answers in one
 * write: `SET` of the answer (kept a little past the agent's deadline, for an agent whose wait ended
 * or whose reply was lost), `PUBLISH` to the asking agent's inbox (replies.ts), `DEL` of what it held,
 * and its next `BLMOVE`. Two round trips a job, where a BullMQ job costs five (add, blocking wait,
 * fetch, completion, and the next fetch or wait), and no script.
 *
 * A worker killed while it holds jobs: every worker process keeps a liveness key alive (JOB_LOCK_MS)
 * and lists its slots in a hash; any worker finding a listed worker's liveness key gone puts the jobs
 * its slots held back at the head of the queue, marked as delivered again, and another slot runs them
 * as a re-run (the operation finishes or undoes what the first run did, docs/ARCHITECTURE.md), as
 * BullMQ did with a stalled job. A job delivered more than MAX_DELIVERIES times is dropped (logged): the
 * agent's abandonment and the recovery sweep settle it.
 *
 * Why not BullMQ here, when every other queue is one: a call job has no retry and no life past its
 * deadline (AGENT_TIMEOUT_MS; attempts 1 under BullMQ too), and its truth is in MongoDB, never in
 * Redis: an operation decides by its own conditional write, and an agent whose wait ends records the
 * operation abandoned there before it answers TIMEOUT (docs/AGENT.md). So a job lost with Redis costs
 * what a job that came too late costs: the agent's abandonment makes its TIMEOUT true, and the recovery
 * sweep takes back whatever a lost run had written. Processing, imports, alerts and maintenance keep
 * BullMQ: they retry with backoff.
 *
 * Keys (`prefix` is the BullMQ prefix, a hash tag on a Redis Cluster, so that a slot's `BLMOVE` from
 * the queue into its own list stays in one hash slot): `<prefix>:calls` the jobs (newest at the left);
 * `<prefix>:calls:held:<worker>:<slot>` the job a slot holds; `<prefix>:calls:answer:<job id>` an
 * answer; `<prefix>:calls:workers` worker -> slot count; `<prefix>:calls:alive:<worker>` its liveness.
 */
export interface CallJob<T> {
  id: string;
  /** The operation (a log and metrics label). */
  name: string;
  data: T;
}

/** The channel of one agent's inbox (replies.ts). */
export const replyChannel = (prefix: string, inbox: string): string => `${prefix}:replies:${inbox}`;

export const callQueueKey = (prefix: string): string => `${prefix}:calls`;
export const callAnswerKey = (prefix: string, jobId: string): string => `${prefix}:calls:answer:${jobId}`;
export const callHeldKey = (prefix: string, worker: string, slot: number): string => `${prefix}:calls:held:${worker}:${slot}`;
/** The held lists of every slot of `worker` (its `slots` as listed in callWorkersKey). */
export const callHeldKeys = (prefix: string, worker: string, slots: number): string[] =>
  Array.from({ length: Number.isFinite(slots) ? slots : 0 }, (_, i) => callHeldKey(prefix, worker, i));
export const callWorkersKey = (prefix: string): string => `${prefix}:calls:workers`;
export const callAliveKey = (prefix: string, worker: string): string => `${prefix}:calls:alive:${worker}`;
/** A job put back in the queue after its worker died carries this mark once per delivery before the last. */
export const REDELIVERED_MARK = 'R';
export const MAX_DELIVERIES = 5;

/** One delivery of a job: the job, and how many times it was delivered (1 for the first). */
export interface Delivery<T> {
  job: CallJob<T>;
  delivery: number;
}

/** A taken job as the queue holds it: the JSON, after one REDELIVERED_MARK per earlier delivery. */
export function readDelivery<T>(raw: string): Delivery<T> {
  let marks = 0;
  while (raw[marks] === REDELIVERED_MARK) marks += 1;
  return { job: JSON.parse(raw.slice(marks)) as CallJob<T>, delivery: marks + 1 };
}
/**
 * A worker slot's connection name (CLIENT SETNAME; `queuePrefix` unhashed, names have no slot): CLIENT
 * LIST then shows each slot, and `cmd=blmove` with flag `b` one waiting for a job, none in hand.
 */
export const callSlotName = (queuePrefix: string, worker: string, slot: number): string => `${queuePrefix}:calls:${worker}:${slot}`;

/** The agent's side: adds jobs, reads an answer after its wait, and tells how many jobs wait. */
export class CallQueue {
  readonly key: string;

  constructor(
    private readonly redis: RedisClient,
    readonly prefix: string,
    /** The queue's name in metrics and the dashboard (QueueNames.transactions). */
    readonly name: string,
  ) {
    this.key = callQueueKey(prefix);
  }

  /** One round trip. The job is taken by whichever worker slot waits longest. */
  async add<T>(job: CallJob<T>): Promise<void> {
    await this.redis.lpush(this.key, JSON.stringify(job));
  }

  /** The answer a worker gave the job, if it gave one in the last few seconds; else null. */
  async answer<R>(jobId: string): Promise<R | null> {
    const stored = await this.redis.get(callAnswerKey(this.prefix, jobId));
    return stored === null ? null : (JSON.parse(stored) as { result: R }).result;
  }

  /** Jobs no worker has taken yet. */
  waiting(): Promise<number> {
    return this.redis.llen(this.key);
  }

  /** Jobs waiting or held by a listed worker's slot (in hand, or held by a dead worker until put back). */
  async unfinished(): Promise<number> {
    const workers = await this.redis.hgetall(callWorkersKey(this.prefix));
    const held = Object.entries(workers).flatMap(([worker, slots]) => callHeldKeys(this.prefix, worker, Number(slots)));
    const lengths = await Promise.all([this.key, ...held].map((key) => this.redis.llen(key)));
    return lengths.reduce((a, b) => a + b, 0);
  }
}

/**
 * Holds `redis`'s socket (cork) until the end of this tick: the commands sent meanwhile leave in one
 * write, and Redis reads them at once. Nothing to do on a Cluster client (one socket per node).
 */
export function holdWritesThisTick(redis: RedisClient): void {
  const socket = isCluster(redis) ? undefined : (redis.stream as Partial<Pick<Socket, 'cork' | 'uncork' | 'writable'>> | undefined);
  if (socket?.writable && socket.cork && socket.uncork) {
    socket.cork();
    process.nextTick(() => socket.uncork!());
  }
}

/**
 * Worker side: writes a job's answer (kept `keepMs`) and publishes it to the asking agent, without
 * waiting for Redis (`onError` hears a failure). The connection's socket is held (corked) until the end
 * of this tick, so what the slot sends next in the same tick (the release of the job and its next
 * `BLMOVE`) leaves in the same write: Redis reads them at once, one round trip.
 */
export function sendAnswer(
  redis: RedisClient,
  keys: { prefix: string; replyPrefix: string },
  job: { id: string; replyTo: string | undefined },
  result: unknown,
  keepMs: number,
  onError: (err: unknown) => void,
): void {
  holdWritesThisTick(redis);
  const answer = JSON.stringify({ job: job.id, result });
  redis.set(callAnswerKey(keys.prefix, job.id), answer, 'PX', Math.max(1, Math.ceil(keepMs))).catch(onError);
  if (job.replyTo) redis.publish(replyChannel(keys.replyPrefix, job.replyTo), answer).catch(onError);
}
