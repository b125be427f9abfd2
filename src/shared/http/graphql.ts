import type { FastifyInstance } from 'fastify';
import mercurius, { IResolvers } from 'mercurius';
import type { AppContext } from '../context';
import { formatGraphqlErrors } from './graphql-errors';

export interface SchemaModule {
  typeDefs: string;
  /** Typed by each module with its own context (the process context plus `extraContext`). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  resolvers: IResolvers<any, any>;
}

const GRAPHQL_PATH = '/graphql';

function mergeResolvers(modules: SchemaModule[]): IResolvers {
  const merged: Record<string, Record<string, unknown>> = {};
  for (const { resolvers } of modules) {
    for (const [type, fields] of Object.entries(resolvers)) {
      merged[type] = { ...(merged[type] ?? {}), ...(fields as Record<string, unknown>) };
    }
  }
  return merged as IResolvers;
}

/**
 * Removes `__typename` members from variables. Apollo-based clients (react-admin among them) send
 * records they fetched back as mutation input, `__typename` included; GraphQL reserves names
 * starting with `__`, so no input type can declare it and dropping it loses nothing.
 */
export function withoutTypename(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTypename);
  if (value === null || typeof value !== 'object') return value;
  const result: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    if (key !== '__typename') result[key] = withoutTypename(member);
  }
  return result;
}

/**
 * Mounts `/graphql` built from schema modules. Resolvers get `{ ctx, ...extraContext }` as their
 * context; errors are shaped by `formatGraphqlErrors` (codes of DESIGN.md section 5).
 */
export async function registerGraphql<Extra extends object = Record<string, never>>(
  app: FastifyInstance,
  ctx: AppContext,
  modules: SchemaModule[],
  extraContext?: Extra,
): Promise<void> {
  app.addHook('preValidation', async (request) => {
    if (request.routeOptions.url !== GRAPHQL_PATH || request.method !== 'POST') return;
    const body = request.body as { query?: unknown; variables?: unknown } | null;
    if (!body || typeof body !== 'object' || Array.isArray(body)) return;
    // Mercurius would hand a non-string query to the parser and fail as an internal error.
    if (body.query !== undefined && typeof body.query !== 'string') {
      throw Object.assign(new Error('query must be a string holding a GraphQL document'), { statusCode: 400 });
    }
    if (body.variables && typeof body.variables === 'object') body.variables = withoutTypename(body.variables);
  });
  await app.register(mercurius, {
    schema: modules.map((m) => m.typeDefs).join('\n'),
    resolvers: mergeResolvers(modules),
    path: GRAPHQL_PATH,
    graphiql: ctx.config.nodeEnv !== 'production',
    context: () => ({ ctx, ...extraContext }),
    errorFormatter: formatGraphqlErrors as never,
    // Bounds the work one request can ask for (GRAPHQL_MAX_DEPTH); deeper documents get a 400.
    queryDepth: ctx.config.graphqlMaxDepth,
  });
}
