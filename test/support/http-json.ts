/** The parsed JSON of an answer's text, or undefined when it is not JSON. */
export function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export interface JsonAnswer {
  status: number;
  /** The raw body, for messages and sizes. */
  text: string;
  /** The body parsed, or undefined when it is not JSON. */
  json: unknown;
}

/** POSTs a JSON body, with a bearer token when given; harnesses and benchmarks that talk to the service. */
export async function postJson(url: string, body: unknown, options: { token?: string; timeoutMs?: number } = {}): Promise<JsonAnswer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(options.token !== undefined ? { authorization: `Bearer ${options.token}` } : {}) },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
  });
  const text = await response.text();
  return { status: response.status, text, json: jsonOf(text) };
}

/** A GraphQL POST whose client can give up: `abort()`, then `settled` gives 'AbortError' (else the response). */
export function abandonableGraphql(url: string, query: string): { abort(): void; settled: Promise<Response | string> } {
  const controller = new AbortController();
  const settled = fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
    signal: controller.signal,
  }).catch((err: Error) => err.name);
  return { abort: () => controller.abort(), settled };
}
