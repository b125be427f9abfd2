/**
 * The fuzz test's checker (test/fuzz/README.md): what one answer must look like, from docs/DESIGN.md
 * section 5, docs/API.md ("Errors") and docs/AGENT.md.
 * - an answer at all, within the per-request timeout, and not 5xx;
 * - JSON in the documented shape: GraphQL `{ data?, errors?: [{ message, extensions: { code } }] }`
 *   (errors required when the status is not 200); REST 4xx `{ error: { code, message } }` or, for
 *   authentication, the GraphQL shape; every code documented, and never INTERNAL_ERROR (client input
 *   is never the server's fault); BAD_USER_INPUT for a broken field names a field;
 * - the case's expectation (mutators.ts): `reject` = 4xx, `refuse` = an error, never a result.
 */
import type { Case } from './mutators';

export interface Answer {
  status: number;
  text: string;
  json?: unknown;
  ms: number;
  /** No HTTP answer: the per-request timeout, or the connection failed. */
  failure?: string;
}

export interface Finding {
  cause: string;
  note?: string;
}

interface ErrorInfo {
  code: string | undefined;
  field: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The errors of an answer, or a description of why its shape is not the documented one. */
function errorsOf(json: unknown, status: number, rest: boolean): ErrorInfo[] | string {
  if (!isObject(json)) return 'the body is not a JSON object';
  if (rest && 'error' in json) {
    const e = json.error;
    if (!isObject(e) || typeof e.code !== 'string' || typeof e.message !== 'string') return '`error` is not { code, message }';
    return [{ code: e.code, field: e.field }];
  }
  if ('errors' in json) {
    const list = json.errors;
    if (!Array.isArray(list) || list.length === 0) return '`errors` is not a non-empty array';
    const infos: ErrorInfo[] = [];
    for (const e of list) {
      if (!isObject(e) || typeof e.message !== 'string') return 'an error without a message';
      if (!isObject(e.extensions) || typeof e.extensions.code !== 'string') return 'an error without extensions.code';
      infos.push({ code: e.extensions.code, field: e.extensions.field });
    }
    return infos;
  }
  if (status !== 200) return `HTTP ${status} without an error`;
  if (!rest && !('data' in json)) return 'neither data nor errors';
  return [];
}

/** Label of an answer for the figures: `400 GRAPHQL_PARSE_FAILED`, `200 ok`, `200 ok:false NOT_FOUND`, ... */
export function answerLabel(c: Case, a: Answer): string {
  if (a.failure) return a.failure;
  const errors = a.json === undefined ? 'not JSON' : errorsOf(a.json, a.status, c.base.surface === 'agent-rest');
  if (typeof errors === 'string') return `${a.status} bad shape`;
  if (errors.length > 0) return `${a.status} ${[...new Set(errors.map((e) => e.code))].join(',')}`;
  const result = resultOf(c, a.json);
  return `${a.status} ${result !== undefined ? describeResult(result, c.base.name === 'recordTransactions') : 'data'}`;
}

/** The operation's result in a successful answer (GraphQL `data.<field>`, REST the body). */
function resultOf(c: Case, json: unknown): unknown {
  if (!isObject(json)) return undefined;
  if (c.base.surface === 'agent-rest') return c.base.name === 'recordTransactions' ? json.results : json;
  return isObject(json.data) ? json.data[c.base.field] : undefined;
}

function describeResult(result: unknown, batch = true): string {
  if (Array.isArray(result) && !batch) return `list of ${result.length}`;
  if (Array.isArray(result)) {
    const reasons = new Set(
      result.map((r) => (isObject(r) ? (r.ok === true ? 'ok' : `ok:false ${String(r.reason).split(':')[0]}`) : 'item?')),
    );
    return `items [${[...reasons].join(', ')}]`;
  }
  if (isObject(result) && 'ok' in result) return result.ok === true ? 'ok' : `ok:false ${String(result.reason)}`;
  if (isObject(result) && 'authorized' in result)
    return result.authorized === true ? 'authorized' : `unauthorized ${String(result.unauthorized_reason)}`;
  return result === null ? 'null' : 'data';
}

/** The findings of one answer, at most one per cause. */
export function check(c: Case, a: Answer, codes: ReadonlySet<string>, timeoutMs: number): Finding[] {
  const findings = findingsOf(c, a, codes, timeoutMs);
  return findings.filter((f, i) => findings.findIndex((g) => g.cause === f.cause) === i);
}

/** The service's BODY_LIMIT_BYTES default, which the fuzz run keeps. */
const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * A body over the limit is answered 413 while it is still arriving, and the server then closes the
 * connection (Node does not read the rest of a refused body): a client still writing sees EPIPE or
 * ECONNRESET instead of the answer, depending on timing. That is a refusal, not a failure.
 */
function refusedOversizeBody(c: Case, a: Answer): boolean {
  return /EPIPE|ECONNRESET/.test(a.failure ?? '') && Buffer.byteLength(c.request.body ?? '') > BODY_LIMIT_BYTES;
}

function findingsOf(c: Case, a: Answer, codes: ReadonlySet<string>, timeoutMs: number): Finding[] {
  if (a.failure === 'timeout') return [{ cause: `no answer within ${timeoutMs / 1000} s` }];
  if (refusedOversizeBody(c, a)) return [];
  if (a.failure) return [{ cause: 'connection failed', note: a.failure }];
  const findings: Finding[] = [];
  if (a.status >= 500) findings.push({ cause: `HTTP ${a.status}` });
  if (a.json === undefined) return [...findings, { cause: 'answer is not JSON' }];
  const rest = c.base.surface === 'agent-rest';
  const errors = errorsOf(a.json, a.status, rest);
  if (typeof errors === 'string') return [...findings, { cause: 'error shape', note: errors }];
  for (const e of errors) {
    if (e.code === 'INTERNAL_ERROR' && a.status >= 500) continue;
    if (e.code === 'INTERNAL_ERROR') findings.push({ cause: 'INTERNAL_ERROR for client input' });
    else if (!codes.has(e.code!)) findings.push({ cause: 'undocumented error code', note: e.code });
    // 413 and 415 are about the HTTP request, not a field.
    else if (
      e.code === 'BAD_USER_INPUT' &&
      c.field &&
      a.status !== 413 &&
      a.status !== 415 &&
      (typeof e.field !== 'string' || e.field === '')
    )
      findings.push({ cause: 'BAD_USER_INPUT without a field' });
  }
  if (c.expect === 'any' || a.status >= 500) return findings;

  const refusedByStatus = a.status >= 400 && a.status < 500;
  if (c.expect === 'reject') {
    if (!refusedByStatus)
      findings.push(
        errors.length > 0
          ? { cause: `not rejected with 4xx (HTTP ${a.status} with errors)` }
          : { cause: 'accepted', note: describeResult(resultOf(c, a.json), c.base.name === 'recordTransactions') },
      );
    return findings;
  }
  if (refusedByStatus || errors.length > 0) return findings;
  // Answered with a result: only a batch may answer each of its (broken) items with BAD_USER_INPUT.
  const result = resultOf(c, a.json);
  if (c.base.name === 'recordTransactions' && Array.isArray(result) && result.length > 0) {
    for (const item of result) {
      if (!isObject(item) || item.ok === true) findings.push({ cause: 'accepted', note: `batch item answered ${describeResult([item])}` });
      else if (!/^BAD_USER_INPUT\b/.test(String(item.reason)))
        findings.push({ cause: 'bad input answered as a business refusal', note: `batch item: ${String(item.reason)}` });
    }
    return findings;
  }
  const described = describeResult(result, c.base.name === 'recordTransactions');
  const businessRefusal = /^(ok:false|unauthorized) /.test(described);
  findings.push({ cause: businessRefusal ? 'bad input answered as a business refusal' : 'accepted', note: described });
  return findings;
}
