import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { FastifyInstance } from 'fastify';
import type { Queue } from 'bullmq';

export const QUEUE_BOARD_PATH = '/admin/queues';

/**
 * Bull Board over every queue at /admin/queues. It can retry and remove jobs, so the access
 * policy puts it behind the `write` scope (apiAccess); browsers log in with Basic authentication,
 * the token as password.
 */
export async function registerQueueBoard(app: FastifyInstance, queues: Queue[]): Promise<void> {
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(QUEUE_BOARD_PATH);
  createBullBoard({
    queues: queues.map((queue) => new BullMQAdapter(queue)),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Call rating queues' } },
  });
  await app.register(serverAdapter.registerPlugin(), { prefix: QUEUE_BOARD_PATH });
}
