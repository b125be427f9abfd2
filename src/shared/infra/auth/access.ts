import { Kind, OperationDefinitionNode, parse } from 'graphql';
import type { FastifyRequest } from 'fastify';
import type { Scope } from './token-format';

/**
 * What a request needs: nothing ('open'), the scopes of the GraphQL operations in its body
 * ('graphql', decided once the body is read), or at least one of the listed scopes.
 */
export type Requirement = 'open' | 'graphql' | { anyOf: Scope[] };

export type AccessPolicy = (path: string) => Requirement;

/** Probes and scrapes: orchestrators and Prometheus call them without credentials. */
const OPEN_PATHS = new Set(['/health', '/ready', '/metrics']);

/** Management API: queries need `read`, mutations `write`; the queue board `write`. */
export const apiAccess: AccessPolicy = (path) => {
  if (OPEN_PATHS.has(path)) return 'open';
  if (path === '/graphql') return 'graphql';
  // The GraphiQL page is static; the queries it sends go to /graphql and are checked there.
  if (path === '/graphiql' || path.startsWith('/graphiql/')) return 'open';
  // The operator console's static files carry no data; its data comes from /graphql with the token.
  if (path === '/console' || path.startsWith('/console/')) return 'open';
  if (path === '/admin/queues' || path.startsWith('/admin/queues/')) return { anyOf: ['write'] };
  // Uploads change data: rate decks and CDR files need write before their body is read.
  if (path === '/v1/rate-decks' || path === '/v1/imports') return { anyOf: ['write'] };
  return { anyOf: ['read', 'write'] };
};

/** Agent: every operation (GraphQL and /v1 REST) needs `agent`. */
export const agentAccess: AccessPolicy = (path) => (OPEN_PATHS.has(path) ? 'open' : { anyOf: ['agent'] });

/** Health, readiness and metrics only: nothing to protect (the standalone worker). */
export const openAccess: AccessPolicy = () => 'open';

function documentsOf(request: FastifyRequest): Array<{ query: unknown; operationName: unknown }> {
  const source = request.method === 'GET' ? request.query : request.body;
  if (typeof source === 'string') return [{ query: source, operationName: undefined }]; // application/graphql
  const items = Array.isArray(source) ? source : [source];
  return items.map((item) => {
    const record = (item ?? {}) as Record<string, unknown>;
    return { query: record.query, operationName: record.operationName };
  });
}

/**
 * The scopes a GraphQL request needs, every one of them: `read` for a query or subscription,
 * `write` for a mutation. Null when the request cannot be parsed: Mercurius answers it with a
 * 400 that reveals nothing, so any API scope may see that.
 */
export function graphqlScopes(request: FastifyRequest): Set<Scope> | null {
  const needed = new Set<Scope>();
  for (const { query, operationName } of documentsOf(request)) {
    if (typeof query !== 'string') return null;
    let operations: OperationDefinitionNode[];
    try {
      operations = parse(query).definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
    } catch {
      return null;
    }
    const selected = typeof operationName === 'string' ? operations.filter((o) => o.name?.value === operationName) : operations;
    // Without a usable operationName every operation in the document counts (the safe side).
    for (const operation of selected.length > 0 ? selected : operations) {
      needed.add(operation.operation === 'mutation' ? 'write' : 'read');
    }
  }
  return needed;
}
