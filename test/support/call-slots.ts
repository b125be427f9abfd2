import type { AppContext } from '../../src/shared/domain/context';

/**
 * The call queue's worker slots of this test's prefix, from CLIENT LIST (each slot names its connection,
 * src/shared/infra/call-queue.ts): how many there are and how many wait for a job (blocked in BLMOVE), so
 * `waiting === total` means no job is in a worker's hand.
 */
export async function callSlots(ctx: Pick<AppContext, 'redis' | 'config'>): Promise<{ total: number; waiting: number }> {
  const lines = String(await ctx.redis.client('LIST'))
    .split('\n')
    .filter((line) => line.includes(` name=${ctx.config.queuePrefix}:calls:`));
  return { total: lines.length, waiting: lines.filter((line) => / flags=\S*b/.test(line) && line.includes(' cmd=blmove')).length };
}

/** No call job in a worker's hand and none waiting to be taken (at least one slot connected). */
export async function callQueueIdle(ctx: Pick<AppContext, 'redis' | 'config' | 'queues'>): Promise<boolean> {
  const slots = await callSlots(ctx);
  return slots.total > 0 && slots.waiting === slots.total && (await ctx.queues.transactions.unfinished()) === 0;
}

/**
 * The call jobs this test's prefix has seen: how many wait, and the ids of those answered lately (each
 * answer is kept a few seconds past its deadline, src/shared/infra/call-queue.ts). A test that proves
 * nothing was enqueued expects no waiting job and no answered id it had not seen before.
 */
export async function callJobsSeen(ctx: Pick<AppContext, 'redis' | 'queues'>): Promise<{ waiting: number; answered: Set<string> }> {
  const answered = await ctx.redis.keys(`${ctx.queues.transactions.prefix}:calls:answer:*`);
  return { waiting: await ctx.queues.transactions.waiting(), answered: new Set(answered) };
}
