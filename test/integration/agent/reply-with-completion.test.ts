import { ReplyInbox, sendReply } from '../../../src/shared/infra/replies';
import type { RedisClient } from '../../../src/shared/infra/redis';
import { createTestContext, TestContext, uniqueName } from '../../support/harness';

/**
 * Issue 36: a worker's answer and the command it sends next in the same tick (BullMQ's completion of
 * the job, issued as soon as the processor returns) reach Redis in one write, so Redis reads them at
 * once: one round trip, not two. Counted as the writes the connection's socket makes (each is one
 * `_write` or one `_writev` of what was held), so other tests sharing the server do not count; the
 * answers still reach the agent's inbox.
 */
describe('an answer travels with the next command of the same tick', () => {
  let ctx: TestContext;
  let worker: RedisClient;
  let writes = 0;
  let inbox: ReplyInbox;

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
  });

  afterAll(async () => {
    await inbox?.close();
    await ctx?.destroy();
  });

  /** Socket writes for `pairs` answers, each followed a few microtasks later by a command on the same connection. */
  const readsFor = async (pairs: number, answer: (jobId: string) => void) => {
    const key = uniqueName('completion');
    const before = writes;
    for (let i = 0; i < pairs; i++) {
      answer(`job-${i}`);
      // As BullMQ's chain from the processor's return to its completion script: promise hops, no I/O.
      await Promise.resolve();
      await null;
      await worker.set(key, String(i));
    }
    return writes - before;
  };

  it('one write per answer and completion with sendReply; two when published on its own', async () => {
    const errors: unknown[] = [];
    const answered = Array.from({ length: 50 }, (_, i) => inbox.expect<{ ok: boolean }>(`job-${i}`, 10_000));
    const together = await readsFor(50, (jobId) =>
      sendReply(worker, ctx.config.queuePrefix, inbox.id, jobId, { ok: true }, (err) => errors.push(err)),
    );
    expect(await Promise.all(answered)).toEqual(Array.from({ length: 50 }, () => ({ ok: true })));
    expect(errors).toEqual([]);
    expect(together).toBe(50);
    // The same pairs with the answer published as it was before (its own write): twice the writes.
    const apart = await readsFor(50, (jobId) => {
      void worker.publish(`${ctx.config.queuePrefix}:replies:elsewhere`, jobId);
    });
    expect(apart).toBe(100);
  });
});
