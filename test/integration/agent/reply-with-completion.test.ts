import { CallQueue, holdWritesThisTick, sendAnswer } from '../../../src/shared/infra/call-queue';
import { ReplyInbox } from '../../../src/shared/infra/replies';
import type { RedisClient } from '../../../src/shared/infra/redis';
import { createTestContext, TestContext, uniqueName } from '../../support/harness';

/**
 * Issue 36: a worker slot's answer (the stored answer and its publication to the agent's inbox) and
 * what the slot sends next in the same tick (the release of the job it held and its next wait) reach
 * Redis in one write, so Redis reads them at once: one round trip, not three. Counted as the writes the
 * connection's socket makes (each is one `_write` or one `_writev` of what was held), so other tests
 * sharing the server do not count; the answers still reach the agent's inbox, and the stored answer is
 * what an agent whose wait ended reads (src/shared/infra/call-queue.ts).
 */
describe('an answer travels with the next commands of the same tick', () => {
  let ctx: TestContext;
  let worker: RedisClient;
  let writes = 0;
  let inbox: ReplyInbox;
  let queue: CallQueue;

  /** Counts the socket writes of `client` from now on. */
  const countWrites = (client: RedisClient) => {
    const socket = (client as unknown as { stream: Record<'_write' | '_writev', (...args: unknown[]) => unknown> }).stream;
    for (const method of ['_write', '_writev'] as const) {
      const original = socket[method].bind(socket);
      socket[method] = (...args: unknown[]) => {
        writes += 1;
        return original(...args);
      };
    }
  };

  beforeAll(async () => {
    ctx = await createTestContext();
    worker = ctx.newRedis();
    await worker.ping();
    countWrites(worker);
    inbox = new ReplyInbox(ctx.newRedis(), ctx.config.queuePrefix, ctx.logger);
    await inbox.start();
    queue = ctx.queues.transactions;
  });

  afterAll(async () => {
    await inbox?.close();
    await ctx?.destroy();
  });

  /** Socket writes for `jobs` answers, each followed in the same tick by two commands, as a slot sends its release and next wait. */
  const writesFor = async (jobs: number, answer: (jobId: string) => void) => {
    const key = uniqueName('held');
    const before = writes;
    for (let i = 0; i < jobs; i++) {
      answer(`job-${i}`);
      holdWritesThisTick(worker);
      const released = worker.del(key);
      await Promise.all([released, worker.set(key, String(i))]);
    }
    return writes - before;
  };

  it('one write per answer, release and next command; the answer reaches the inbox and is stored', async () => {
    const errors: unknown[] = [];
    const answered = Array.from({ length: 50 }, (_, i) => inbox.expect<{ ok: boolean }>(`job-${i}`, 10_000));
    const together = await writesFor(50, (jobId) =>
      sendAnswer(
        worker,
        { prefix: queue.prefix, replyPrefix: ctx.config.queuePrefix },
        { id: jobId, replyTo: inbox.id },
        { ok: true },
        10_000,
        (err) => errors.push(err),
      ),
    );
    expect(await Promise.all(answered)).toEqual(Array.from({ length: 50 }, () => ({ ok: true })));
    expect(errors).toEqual([]);
    expect(together).toBe(50);
    expect(await queue.answer('job-7')).toEqual({ ok: true });
    expect(await queue.answer('never-sent')).toBeNull();
    // The same commands without holding the socket: a write each.
    const apart = await writesFor(50, (jobId) => {
      void worker.publish(`${ctx.config.queuePrefix}:replies:elsewhere`, jobId);
    });
    expect(apart).toBeGreaterThanOrEqual(100);
  });
});
