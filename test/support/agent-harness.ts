import type { FastifyInstance } from 'fastify';
import { buildAgent } from '../../src/agent/app';
import { createTestContext, graphql, TestContext } from './harness';
import { startWorkerProcess, WorkerProcess } from './processes';

export interface AgentHarness {
  ctx: TestContext;
  url: string;
  workers: WorkerProcess[];
  /** POST a JSON body to the agent's REST mirror. */
  rest<T = Record<string, unknown>>(path: string, body: unknown): Promise<{ status: number; body: T }>;
  gql: (query: string, variables?: Record<string, unknown>) => ReturnType<typeof graphql>;
  close(): Promise<void>;
}

/**
 * Worker processes that queue every ended call for the processing queue instead of charging it in the
 * end's job (PROCESSING_INLINE=false): for tests that pause that queue to see a call ended and not yet
 * charged, or that deliver its jobs by hand.
 */
export const QUEUED_PROCESSING = { PROCESSING_INLINE: 'false' } as const;

/** The agent in this process (HTTP on a free port) and `workerCount` real worker processes. */
export async function startAgentHarness(workerCount = 2, overrides: Record<string, string> = {}): Promise<AgentHarness> {
  const ctx = await createTestContext({ JOB_LOCK_MS: '2000', AGENT_TIMEOUT_MS: '15000', ...overrides });
  let app: FastifyInstance | undefined;
  const workers: WorkerProcess[] = [];
  try {
    app = await buildAgent(ctx);
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    for (let i = 0; i < workerCount; i++) workers.push(await startWorkerProcess(ctx.config));
    return {
      ctx,
      url,
      workers,
      rest: async (path, body) => {
        const response = await fetch(`${url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        return { status: response.status, body: (await response.json()) as never };
      },
      gql: (query, variables) => graphql(url, query, variables),
      close: async () => {
        await Promise.all(workers.map((w) => w.stop()));
        await app?.close();
        await ctx.destroy();
      },
    };
  } catch (err) {
    await Promise.all(workers.map((w) => w.kill()));
    await app?.close();
    await ctx.destroy();
    throw err;
  }
}

export async function waitFor<T>(probe: () => Promise<T | undefined | null | false>, what: string, timeoutMs = 30000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
