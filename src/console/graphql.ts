import { getToken } from './auth/token';

/** An HTTP or GraphQL failure; `status` is the HTTP status (401: the token is invalid). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** fetch() with the stored bearer token. */
export function apiFetch(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const token = getToken();
  if (token && !headers.has('authorization')) headers.set('authorization', `Bearer ${token}`);
  return fetch(path, { ...init, headers });
}

interface GraphqlAnswer<T> {
  data?: T | null;
  errors?: Array<{ message: string; extensions?: { code?: string } }>;
}

/** POSTs a GraphQL operation to /graphql; throws an ApiError with the first GraphQL message. */
export async function gql<T>(query: string, variables?: object, token?: string): Promise<T> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const response = await apiFetch('/graphql', { method: 'POST', headers, body: JSON.stringify({ query, variables: variables ?? {} }) });
  let body: GraphqlAnswer<T> | { message?: string; code?: string } | null = null;
  try {
    body = (await response.json()) as GraphqlAnswer<T>;
  } catch {
    body = null;
  }
  const answer = (body ?? {}) as GraphqlAnswer<T> & { message?: string; code?: string; error?: { message?: string; code?: string } };
  if (answer.errors && answer.errors.length > 0) {
    const first = answer.errors[0];
    throw new ApiError(first.message, response.status, first.extensions?.code);
  }
  if (!response.ok) {
    const message = answer.message ?? answer.error?.message ?? `HTTP ${response.status} ${response.statusText}`;
    throw new ApiError(message, response.status, answer.code ?? answer.error?.code);
  }
  if (answer.data === undefined || answer.data === null) throw new ApiError('Empty GraphQL answer', response.status);
  return answer.data;
}
