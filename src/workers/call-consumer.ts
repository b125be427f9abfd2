import { randomUUID } from 'node:crypto';
import type { AppContext } from '../shared/domain/context';
import type { TransactionJob } from '../shared/domain/calls';
import { metricsFor } from '../shared/domain/metrics';
import { QueueNames } from '../shared/domain/queues/names';
import {
  callAliveKey,
  callHeldKeys,
  callQueueKey,
  callSlotName,
  callWorkersKey,
  MAX_DELIVERIES,
  holdWritesThisTick,
  readDelivery,
  REDELIVERED_MARK,
  sendAnswer,
  type CallJob,
  type Delivery,
} from '../shared/infra/call-queue';
import type { RedisClient } from '../shared/infra/redis';
import type { CallOutcome } from './transactions/processor';

/** How long a slot's BLMOVE blocks before it asks again: a dead connection is noticed within this. */
const BLOCK_SECONDS = 20;
/** How long a slot waits after Redis refused its BLMOVE before it asks again. */
const RETRY_MS = 500;

/** A slot: its own connection, the list of the job it holds, and whether it waits in BLMOVE now. */
interface Slot {
  connection: RedisClient;
  held: string;
  waiting: boolean;
  done: Promise<void>;
}

/**
 * Puts back at the head of the queue the jobs a dead worker's slots held, each marked once more as
 * delivered again, in one script per slot list (a job is never in two places).
 */
const PUT_BACK = `
local moved = 0
for i = 2, #KEYS do
  local job = redis.call('LPOP', KEYS[i])
  while job do
    redis.call('RPUSH', KEYS[1], ARGV[1] .. job)
    moved = moved + 1
    job = redis.call('LPOP', KEYS[i])
  end
end
return moved`;

/**
 * Takes the call queue's jobs (src/shared/infra/call-queue.ts): `concurrency` slots, each a connection
 * of its own that blocks in BLMOVE, runs one job at a time, and sends the job's answer, the release of
 * the job it held and its next BLMOVE in one write. An end's charges (CallOutcome.afterAnswer) run after
 * the answer and before the release, so a worker killed meanwhile leaves the end to be run again.
 *
 * Liveness: the process keeps `alive` set (JOB_LOCK_MS) and, every half of it, looks for listed workers
 * whose liveness ran out and puts their held jobs back (PUT_BACK). close(): every slot finishes the job
 * in hand; the ones waiting are cut (their connection closed); a job Redis moved to a slot in that
 * instant is put back unmarked (it never ran); then the worker leaves the list.
 */
export class CallConsumer {
  private closing = false;
  private readonly id = randomUUID();
  private readonly prefix: string;
  private readonly slots: Slot[] = [];
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly ctx: AppContext,
    private readonly process: (job: CallJob<TransactionJob>, delivery: number) => Promise<CallOutcome>,
    private readonly concurrency: number,
  ) {
    this.prefix = ctx.queues.transactions.prefix;
  }

  async start(): Promise<void> {
    await this.beat();
    const period = Math.max(250, Math.floor(this.ctx.config.jobLockMs / 2));
    this.heartbeat = setInterval(() => {
      this.beat()
        .then(() => this.putBackDeadWorkersJobs())
        .catch((err: unknown) => this.ctx.logger.warn({ err }, 'call queue: liveness not renewed; next period'));
    }, period);
    this.heartbeat.unref();
    callHeldKeys(this.prefix, this.id, this.concurrency).forEach((held, i) => {
      const slot: Slot = {
        connection: this.ctx.newRedis(callSlotName(this.ctx.config.queuePrefix, this.id, i)),
        held,
        waiting: false,
        done: Promise.resolve(),
      };
      this.slots.push(slot);
      slot.done = this.run(slot);
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.heartbeat);
    for (const slot of this.slots) if (slot.waiting) slot.connection.disconnect();
    await Promise.all(this.slots.map((s) => s.done));
    const held = this.slots.map((slot) => slot.held);
    try {
      await this.ctx.redis.eval(PUT_BACK, held.length + 1, callQueueKey(this.prefix), ...held, '');
      await this.ctx.redis.hdel(callWorkersKey(this.prefix), this.id);
      await this.ctx.redis.del(callAliveKey(this.prefix, this.id));
    } catch (err) {
      this.ctx.logger.warn({ err }, 'call queue: could not leave the worker list; a live worker puts back what this one held');
    }
  }

  /** Alive for JOB_LOCK_MS more, and listed (again, if a worker took this one for dead while it stalled). */
  private beat(): Promise<unknown> {
    return this.ctx.redis
      .pipeline()
      .set(callAliveKey(this.prefix, this.id), '1', 'PX', this.ctx.config.jobLockMs)
      .hset(callWorkersKey(this.prefix), this.id, String(this.concurrency))
      .exec();
  }

  /** Jobs held by workers whose liveness ran out go back to the queue's head (call-queue.ts). */
  private async putBackDeadWorkersJobs(): Promise<void> {
    const workers = await this.ctx.redis.hgetall(callWorkersKey(this.prefix));
    for (const [worker, slots] of Object.entries(workers)) {
      if (worker === this.id || (await this.ctx.redis.exists(callAliveKey(this.prefix, worker)))) continue;
      const held = callHeldKeys(this.prefix, worker, Number(slots));
      const moved = held.length
        ? await this.ctx.redis.eval(PUT_BACK, held.length + 1, callQueueKey(this.prefix), ...held, REDELIVERED_MARK)
        : 0;
      await this.ctx.redis.hdel(callWorkersKey(this.prefix), worker);
      if (Number(moved) > 0) this.ctx.logger.warn({ worker, jobs: moved }, 'call queue: a dead worker held jobs; delivered again');
    }
  }

  private take(slot: Slot): Promise<string | null> | undefined {
    if (this.closing) return undefined;
    slot.waiting = true;
    const taken = slot.connection.blmove(callQueueKey(this.prefix), slot.held, 'RIGHT', 'LEFT', BLOCK_SECONDS);
    void taken.then(
      () => (slot.waiting = false),
      () => (slot.waiting = false),
    );
    return taken;
  }

  private async run(slot: Slot): Promise<void> {
    let next = this.take(slot);
    while (next) {
      let raw: string | null;
      try {
        raw = await next;
      } catch (err) {
        if (this.closing) return;
        this.ctx.logger.warn({ err }, 'call queue: waiting for a job failed; asking again');
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        next = this.take(slot);
        continue;
      }
      next = raw === null ? this.take(slot) : (await this.handle(slot, raw)).next;
    }
  }

  /**
   * Runs one job and answers it; returns the slot's next wait, sent with the answer when nothing follows
   * it (wrapped: an async function would otherwise wait for the promise it returns).
   */
  private async handle(slot: Slot, raw: string): Promise<{ next: Promise<string | null> | undefined }> {
    let delivery: Delivery<TransactionJob>;
    try {
      delivery = readDelivery<TransactionJob>(raw);
    } catch (err) {
      this.ctx.logger.error({ err, raw: raw.slice(0, 200) }, 'call queue: unreadable job dropped');
      return this.release(slot);
    }
    const { job } = delivery;
    // Made only when something is logged: most jobs log nothing, and this is every job's path.
    const log = () => this.ctx.logger.child({ jobId: job.id, op: job.name, delivery: delivery.delivery });
    if (delivery.delivery > MAX_DELIVERIES) {
      log().error('call queue: job delivered too often, dropped; the agent recorded it abandoned and the recovery sweep settles it');
      return this.release(slot);
    }
    const started = Date.now();
    let outcome: CallOutcome;
    try {
      outcome = await this.process(job, delivery.delivery);
    } catch (err) {
      // As a BullMQ job of one attempt: no answer, the agent's wait ends and it records the abandonment.
      log().warn({ err }, 'job failed');
      this.observe(started, 'failed');
      return this.release(slot);
    }
    const keepMs = Math.max(0, job.data.deadline - Date.now()) + this.ctx.config.agentAbandonMs + 5000;
    sendAnswer(
      slot.connection,
      { prefix: this.prefix, replyPrefix: this.ctx.config.queuePrefix },
      { id: job.id, replyTo: job.data.reply_to },
      outcome.result,
      keepMs,
      (err: unknown) => log().warn({ err }, 'answer not sent; the agent records the operation abandoned instead'),
    );
    this.observe(started, 'completed');
    if (outcome.afterAnswer) {
      await outcome
        .afterAnswer()
        .catch((err: unknown) => log().error({ err }, 'the work after the answer failed; the maintenance pass finishes it'));
    }
    return this.release(slot);
  }

  /** Lets go of the held job and, unless closing, waits for the next: one write with whatever this tick sent before. */
  private release(slot: Slot): { next: Promise<string | null> | undefined } {
    holdWritesThisTick(slot.connection);
    slot.connection.del(slot.held).catch((err: unknown) => this.ctx.logger.warn({ err }, 'call queue: held job not released'));
    return { next: this.take(slot) };
  }

  private observe(started: number, outcome: 'completed' | 'failed'): void {
    metricsFor(this.ctx).jobDuration.observe({ queue: QueueNames.transactions, outcome }, (Date.now() - started) / 1000);
  }
}
