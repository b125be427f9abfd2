import type { FastifyInstance, FastifyRequest } from 'fastify';
import { getOperationAST, parse, validate, type DocumentNode, type GraphQLSchema } from 'graphql';
import mercurius, { IResolvers, type MercuriusContext } from 'mercurius';
import type { ServiceContext } from '../service-context';
import { queryLimitsRule, type QueryLimits, type RequestParams } from '../graphql/limits';
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

/** Deepest nesting of `variables` accepted: the schema's input types nest a few levels, not thousands. */
export const MAX_VARIABLES_DEPTH = 32;

/** An error answered HTTP 400 BAD_REQUEST (src/shared/infra/http/graphql-errors.ts) before GraphQL runs. */
function badRequest(message: string): Error {
  return Object.assign(new Error(message), { statusCode: 400 });
}

/**
 * Removes `__typename` members from variables. Apollo-based clients (react-admin among them) send
 * records they fetched back as mutation input, `__typename` included; GraphQL reserves names
 * starting with `__`, so no input type can declare it and dropping it loses nothing. Nesting deeper
 * than MAX_VARIABLES_DEPTH is refused (400), which also keeps this recursion off the stack's limit.
 */
export function withoutTypename(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_VARIABLES_DEPTH) throw badRequest(`variables nest more than ${MAX_VARIABLES_DEPTH} levels deep`);
  if (Array.isArray(value)) return value.map((member) => withoutTypename(member, depth + 1));
  const result: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    if (key !== '__typename') result[key] = withoutTypename(member, depth + 1);
  }
  return result;
}

/**
 * A query string that is JSON text (`{}`, `1`, `null`, `[]`, an object) is never a GraphQL document,
 * but Mercurius would take it, after the syntax error, for a parsed syntax tree and fail on it as an
 * internal error. Refused here with the parser's own syntax error (GRAPHQL_PARSE_FAILED).
 */
function refuseJsonQuery(query: string): void {
  try {
    JSON.parse(query);
  } catch {
    return;
  }
  try {
    parse(query);
  } catch (err) {
    throw badRequest((err as Error).message);
  }
}

/** The request's checks Mercurius leaves to the resolvers or fails on as internal errors. */
function checkRequest(request: FastifyRequest): void {
  if (request.method === 'POST') {
    const body = request.body as { query?: unknown; variables?: unknown } | null;
    if (!body || typeof body !== 'object' || Array.isArray(body)) return;
    // Mercurius would hand a non-string query to the parser and fail as an internal error.
    if (body.query !== undefined && typeof body.query !== 'string') throw badRequest('query must be a string holding a GraphQL document');
    if (typeof body.query === 'string') refuseJsonQuery(body.query);
    if (body.variables && typeof body.variables === 'object') body.variables = withoutTypename(body.variables);
    return;
  }
  if (request.method !== 'GET') return;
  const params = request.query as { query?: unknown; variables?: unknown; operationName?: unknown };
  if (typeof params.query !== 'string') return;
  let document: DocumentNode;
  try {
    document = parse(params.query);
  } catch {
    refuseJsonQuery(params.query);
    return; // Mercurius answers the syntax error
  }
  if (typeof params.variables === 'string') {
    let variables: unknown;
    try {
      variables = JSON.parse(params.variables);
    } catch {
      throw badRequest('variables must be a JSON object');
    }
    if (variables !== null && (typeof variables !== 'object' || Array.isArray(variables)))
      throw badRequest('variables must be a JSON object');
    withoutTypename(variables); // only for its depth check: Mercurius parses the string again
  }
  // Mercurius reads the operation of a GET (only queries may run) without checking it exists.
  const operationName = typeof params.operationName === 'string' ? params.operationName : undefined;
  if (!getOperationAST(document, operationName)) {
    throw badRequest(
      operationName ? `Unknown operation named "${operationName}".` : 'Must provide operation name if query contains multiple operations.',
    );
  }
}

/** operationName and variables of the request a GraphQL hook runs for (POST body or GET query string). */
function requestParams(context: MercuriusContext): RequestParams {
  const request = context.reply?.request;
  if (!request) return {};
  const params = (request.method === 'GET' ? request.query : request.body) as { operationName?: unknown; variables?: unknown } | null;
  let variables = params?.variables;
  if (typeof variables === 'string') {
    try {
      variables = JSON.parse(variables);
    } catch {
      variables = undefined;
    }
  }
  return {
    operationName: typeof params?.operationName === 'string' ? params.operationName : undefined,
    variables: variables && typeof variables === 'object' ? (variables as Record<string, unknown>) : undefined,
  };
}

/**
 * Mounts `/graphql` built from schema modules. Resolvers get `{ ctx, ...extraContext }` as their
 * context; errors are shaped by `formatGraphqlErrors` (codes of docs/DESIGN.md section 5). Documents over
 * the limits of src/shared/infra/graphql/limits.ts are refused (400) before any resolver runs.
 */
export async function registerGraphql<Extra extends object = Record<string, never>>(
  app: FastifyInstance,
  ctx: ServiceContext,
  modules: SchemaModule[],
  extraContext?: Extra,
): Promise<void> {
  // Fastify answers HEAD on every GET route by running the GET handler, and Mercurius keeps its GET
  // rules (queries only, the query string read) for GET alone: a HEAD with a mutation in its query
  // string would run it, past the scope check that reads a HEAD's (absent) body. Nothing to fetch.
  app.addHook('onRequest', async (request, reply) => {
    if (request.method === 'HEAD' && request.routeOptions.url === GRAPHQL_PATH) return reply.code(405).header('allow', 'GET, POST').send();
  });
  app.addHook('preValidation', async (request) => {
    if (request.routeOptions.url === GRAPHQL_PATH) checkRequest(request);
  });
  await app.register(mercurius, {
    schema: modules.map((m) => m.typeDefs).join('\n'),
    resolvers: mergeResolvers(modules),
    path: GRAPHQL_PATH,
    graphiql: ctx.config.nodeEnv !== 'production',
    context: () => ({ ctx, ...extraContext }),
    errorFormatter: formatGraphqlErrors as never,
  });
  const limits: QueryLimits = {
    maxDepth: ctx.config.graphqlMaxDepth,
    maxFields: ctx.config.graphqlMaxFields,
    maxCost: ctx.config.graphqlMaxCost,
  };
  const enforce = (schema: GraphQLSchema, document: DocumentNode, context: MercuriusContext) => {
    const errors = validate(schema, document, [queryLimitsRule(limits, requestParams(context))]);
    // Shaped like Mercurius' validation failure: GRAPHQL_VALIDATION_FAILED, HTTP 400.
    if (errors.length > 0)
      throw Object.assign(new Error('Query limits exceeded'), { statusCode: 400, code: 'MER_ERR_GQL_VALIDATION', errors });
  };
  // Before graphql-js validation (whose cost grows with the document) when the document is new, and
  // before execution on every request: a cached document may come back with larger page sizes.
  app.graphql.addHook('preValidation', async (schema, document, context) => enforce(schema, document, context));
  app.graphql.addHook('preExecution', async (schema, document, context) => {
    enforce(schema, document, context);
  });
}
