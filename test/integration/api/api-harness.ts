import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../../src/api/app';
import { createTestContext, graphql, TestContext } from '../../support/harness';

export interface GraphqlError {
  message: string;
  path?: Array<string | number>;
  extensions?: { code?: string; field?: string; [key: string]: unknown };
}

export interface GraphqlAnswer<T> {
  status: number;
  body: { data?: T | null; errors?: GraphqlError[] };
}

export interface ApiHarness {
  ctx: TestContext;
  url: string;
  /** POSTs a document; returns status and body as they came. */
  gql<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): Promise<GraphqlAnswer<T>>;
  /** POSTs a document that must succeed without errors; returns `data` (loosely typed: tests dig into it). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  ok<T = Record<string, any>>(query: string, variables?: Record<string, unknown>): Promise<T>;
  close(): Promise<void>;
}

/** The management API on a free port, on a database and queue prefix of its own. */
export async function startApi(overrides: Record<string, string> = {}): Promise<ApiHarness> {
  const ctx = await createTestContext(overrides);
  let app: FastifyInstance | undefined;
  try {
    app = await buildApi(ctx);
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const gql = async <T>(query: string, variables?: Record<string, unknown>) =>
      (await graphql<T>(url, query, variables)) as GraphqlAnswer<T>;
    return {
      ctx,
      url,
      gql,
      ok: async <T>(query: string, variables?: Record<string, unknown>) => {
        const answer = await gql<T>(query, variables);
        if (answer.status !== 200 || answer.body.errors?.length) {
          throw new Error(`GraphQL request failed (${answer.status}): ${JSON.stringify(answer.body)}`);
        }
        return answer.body.data as T;
      },
      close: async () => {
        await app?.close();
        await ctx.destroy();
      },
    };
  } catch (err) {
    await app?.close();
    await ctx.destroy();
    throw err;
  }
}

/** The single error of an answer, checked for its code (and field). */
export function expectError<T>(answer: GraphqlAnswer<T>, code: string, field?: string): GraphqlError {
  const errors = answer.body.errors ?? [];
  if (errors.length !== 1) throw new Error(`expected one error, got ${JSON.stringify(answer.body)}`);
  expect(errors[0].extensions?.code).toBe(code);
  if (field !== undefined) expect(errors[0].extensions?.field).toBe(field);
  return errors[0];
}
