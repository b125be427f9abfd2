import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { replyChannel, type CallQueue } from './call-queue';
import { closeRedis, type RedisClient } from './redis';

/**
 * Answers addressed to the agent that asked (issue 12). A job carries `reply_to`, its agent's inbox;
 * the worker publishes the answer there (Redis pub/sub) as soon as it has it. Each agent reads only
 * its own answers, so the cost per agent does not grow with the number of agents, unlike QueueEvents,
 * where every agent reads every job's events from the queue's event stream.
 * Pub/sub delivers at most once: an answer published while the agent's subscriber reconnects is lost,
 * and the agent, its wait over, reads the answer the worker also stored (call-queue.ts) instead. The
 * answer itself is never at stake: workers decide in MongoDB before they answer.
 * On a Redis Cluster this is classic pub/sub (SUBSCRIBE/PUBLISH through ioredis' Cluster client): a
 * message published on any node reaches subscribers on every node, the channel needs no hash slot.
 */

/** What a job carries to be answered directly. */
export interface Addressed {
  reply_to?: string;
}

/** The agent's wait ended without an answer (its deadline). */
export class ReplyTimeout extends Error {
  constructor(jobId: string) {
    super(`no answer to job ${jobId}: timed out`);
  }
}

interface Waiter {
  resolve: (value: unknown) => void;
  timer: NodeJS.Timeout;
}

/** One agent's inbox: a subscriber connection of its own and the jobs waiting for their answer. */
export class ReplyInbox {
  readonly id = randomUUID();
  private readonly waiting = new Map<string, Waiter>();
  private readonly channel: string;

  constructor(
    private readonly subscriber: RedisClient,
    prefix: string,
    private readonly logger: Logger,
  ) {
    this.channel = replyChannel(prefix, this.id);
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.channel) this.deliver(message);
    });
  }

  async start(): Promise<void> {
    await this.subscriber.subscribe(this.channel);
  }

  /** The job's answer, or ReplyTimeout after `timeoutMs`. Register before adding the job: a fast worker may answer first. */
  expect<R>(jobId: string, timeoutMs: number): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          this.waiting.delete(jobId);
          reject(new ReplyTimeout(jobId));
        },
        Math.max(0, timeoutMs),
      );
      this.waiting.set(jobId, { resolve: resolve as (value: unknown) => void, timer });
    });
  }

  /** Stops waiting for a job (it could not be added). */
  forget(jobId: string): void {
    const waiter = this.waiting.get(jobId);
    if (!waiter) return;
    clearTimeout(waiter.timer);
    this.waiting.delete(jobId);
  }

  private deliver(message: string): void {
    let reply: { job: string; result: unknown };
    try {
      reply = JSON.parse(message) as { job: string; result: unknown };
    } catch (err) {
      this.logger.warn({ err }, 'unreadable reply ignored');
      return;
    }
    const waiter = this.waiting.get(reply.job);
    if (!waiter) return; // given up already (deadline): the agent answered from the stored answer or MongoDB
    clearTimeout(waiter.timer);
    this.waiting.delete(reply.job);
    waiter.resolve(reply.result);
  }

  async close(): Promise<void> {
    for (const [jobId] of this.waiting) this.forget(jobId);
    await closeRedis(this.subscriber);
  }
}

/**
 * Adds a job addressed to `inbox` and waits for its answer (ReplyTimeout after `timeoutMs`). The one
 * request/response path of the agent, and of the benchmark's bare round trip (bench/agent.ts).
 */
export async function request<T extends Addressed, R>(
  queue: CallQueue,
  inbox: ReplyInbox,
  name: string,
  job: T,
  jobId: string,
  timeoutMs: number,
): Promise<R> {
  const answer = inbox.expect<R>(jobId, timeoutMs);
  const added = queue.add<T>({ id: jobId, name, data: { ...job, reply_to: inbox.id } }).then(
    () => answer,
    (err: unknown) => {
      inbox.forget(jobId);
      throw err;
    },
  );
  // The wait is bounded even while the add hangs (Redis unreachable: ioredis holds the command).
  return Promise.race([added, answer]);
}
