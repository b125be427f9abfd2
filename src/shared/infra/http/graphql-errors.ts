import { GraphQLError, type ExecutionResult, type GraphQLFormattedError } from 'graphql';
import type { MercuriusContext } from 'mercurius';
import { ErrorCodes, HTTP_STATUS_OF_CODE, RequestErrorCodes, ServiceError } from '../errors';
import { isStoreUnreachable } from '../store-errors';

/**
 * Turns what Mercurius hands over (resolver errors, and request errors: syntax, validation,
 * variable coercion, HTTP-level failures) into the error shape of docs/DESIGN.md section 5:
 * `errors[]` with `message`, `locations`, `path` and `extensions.code`.
 *
 * - A ServiceError keeps its code and details (`field` for BAD_USER_INPUT).
 * - A value refused by a scalar (BigInt, DateTime) is BAD_USER_INPUT naming the argument.
 * - Syntax errors are GRAPHQL_PARSE_FAILED, other schema validation errors GRAPHQL_VALIDATION_FAILED;
 *   these are request errors and answer HTTP 400.
 * - A variable value graphql-js refuses (wrong type, required one missing or null) is BAD_USER_INPUT
 *   naming the variable's input field, HTTP 400.
 * - Other errors graphql-js raises before running anything (unknown operationName, two unnamed
 *   operations, a subscription) are BAD_REQUEST, HTTP 400: the client's fault, never a 500.
 * - Anything else is INTERNAL_ERROR with a generic message; the real error goes to the log only.
 */

const INTERNAL_MESSAGE = 'Internal server error';
const STORE_UNREACHABLE_MIDWAY =
  'The database is unreachable: this may not have been carried out, or only in part; read the data again, then try again in a moment';

const STATUS_OF_CODE = HTTP_STATUS_OF_CODE;

const CODE_OF_STATUS: Record<number, string> = {
  401: ErrorCodes.UNAUTHENTICATED,
  403: ErrorCodes.FORBIDDEN,
  404: ErrorCodes.NOT_FOUND,
  429: ErrorCodes.RATE_LIMITED,
};

type Logger = MercuriusContext['app']['log'];

/** One error as Mercurius reports it, with the wrapper it came in (request-level failures). */
interface Reported {
  error: GraphQLError;
  /** The Mercurius/Fastify error that carried it, when the request failed before execution. */
  wrapper: (Error & { code?: string; statusCode?: number }) | null;
}

function asGraphQLError(err: unknown): GraphQLError {
  if (err instanceof GraphQLError) return err;
  const e = err as Error & { extensions?: Record<string, unknown> };
  return new GraphQLError(e?.message ?? String(err), { originalError: e instanceof Error ? e : undefined });
}

/** Mercurius wraps validation failures in one error holding the list; unwrap them. */
function unwrap(errors: readonly GraphQLError[]): Reported[] {
  return errors.flatMap((error): Reported[] => {
    const original = error.originalError as (Error & { errors?: unknown; statusCode?: number; code?: string }) | undefined;
    if (original && Array.isArray(original.errors)) {
      return original.errors.map((inner) => ({ error: asGraphQLError(inner), wrapper: original }));
    }
    if (error.path === undefined && original && typeof original.statusCode === 'number') {
      return [{ error, wrapper: original }];
    }
    return [{ error, wrapper: null }];
  });
}

function serviceErrorOf(error: GraphQLError): ServiceError | null {
  let current: unknown = error.originalError;
  for (let depth = 0; current && depth < 5; depth++) {
    if (current instanceof ServiceError) return current;
    current = (current as { originalError?: unknown }).originalError;
  }
  return null;
}

const VARIABLE_ERROR = /^Variable "\$([^"]+)" got invalid value [\s\S]*?(?: at "([^"]+)")?; /;
const NAME_BEFORE_VALUE = /([_A-Za-z][_0-9A-Za-z]*)\s*:\s*(?:\[[^\]]*)?$/;

/**
 * The argument or input field a refused value was given for: from a variable error's path
 * (`filter.ids[1]` -> `ids`), or for a literal, the name written before it in the document.
 */
export function inputFieldOf(error: GraphQLError): string | undefined {
  const variable = VARIABLE_ERROR.exec(error.message);
  if (variable) {
    const path = variable[2] ?? variable[1];
    const last = path
      .replace(/\[\d+\]/g, '')
      .split('.')
      .pop();
    return last || variable[1];
  }
  const position = error.positions?.[0];
  const body = error.source?.body;
  if (position === undefined || body === undefined) return undefined;
  return NAME_BEFORE_VALUE.exec(body.slice(0, position))?.[1];
}

/** graphql-js' refusals of a variable's value (coercion), as opposed to the document's variable definitions. */
const VARIABLE_VALUE_ERROR =
  /^Variable "\$([^"]+)" (?:got invalid value|of required type "[^"]*" was not provided|of non-null type "[^"]*" must not be null)/;

/** graphql-js' errors about which operation to run: the request's fault, whether or not variables came with it. */
const OPERATION_ERROR =
  /^(?:Unknown operation named|Must provide operation name|Must provide an operation|Schema is not configured to execute)/;

/** Fastify's JSON-schema check of the body or query string ("body must be object"): the HTTP request, not the document. */
function isRequestShapeError(error: GraphQLError): boolean {
  return typeof (error.originalError as { validationContext?: unknown } | undefined)?.validationContext === 'string';
}

interface Formatted {
  formatted: GraphQLFormattedError;
  /** HTTP status this error asks for when the request never reached execution. */
  requestStatus: number | null;
}

function shape(error: GraphQLError, message: string, extensions: Record<string, unknown>): GraphQLFormattedError {
  return {
    message,
    ...(error.locations ? { locations: error.locations } : {}),
    ...(error.path ? { path: error.path } : {}),
    extensions,
  };
}

function formatOne({ error, wrapper }: Reported, executed: boolean, log: Logger): Formatted {
  const service = serviceErrorOf(error);
  const beforeExecution = error.path === undefined;
  if (service) {
    const extensions: Record<string, unknown> = { code: service.code, ...service.details };
    let message = error.message;
    if (service.code === ErrorCodes.BAD_USER_INPUT && extensions.field === undefined) {
      const field = inputFieldOf(error);
      if (field) {
        extensions.field = field;
        message = `${field}: ${service.message}`;
      }
    }
    const status = beforeExecution ? (wrapper?.statusCode ?? STATUS_OF_CODE[service.code] ?? 400) : null;
    return { formatted: shape(error, message, extensions), requestStatus: status };
  }
  const variable = beforeExecution ? VARIABLE_VALUE_ERROR.exec(error.message) : null;
  if (variable && (wrapper || !executed)) {
    const extensions = { code: ErrorCodes.BAD_USER_INPUT, field: inputFieldOf(error) ?? variable[1] };
    return { formatted: shape(error, error.message, extensions), requestStatus: 400 };
  }
  // graphql-js reports a request it cannot start (no such operation, a subscription) as a result with
  // errors and no data; such an error has neither a path nor an underlying exception.
  const requestError = beforeExecution && !executed && !error.originalError;
  if (wrapper || requestError) {
    const status = wrapper?.statusCode ?? 400;
    if (status < 500) {
      const code = error.message.startsWith('Syntax Error')
        ? RequestErrorCodes.GRAPHQL_PARSE_FAILED
        : wrapper?.code === 'MER_ERR_GQL_VALIDATION' && !OPERATION_ERROR.test(error.message) && !isRequestShapeError(error)
          ? RequestErrorCodes.GRAPHQL_VALIDATION_FAILED
          : (CODE_OF_STATUS[status] ?? RequestErrorCodes.BAD_REQUEST);
      return { formatted: shape(error, error.message, { code }), requestStatus: status };
    }
  }
  if (isStoreUnreachable(error.originalError)) {
    // Not a bug: a store is down. Whether a mutation got part of its way is not known here, so the
    // answer says so (money moves through the ledger's once-only operations: sending it again is safe).
    log.warn({ err: error.originalError, path: error.path }, 'a store is unreachable in a GraphQL request');
    return {
      formatted: shape(error, STORE_UNREACHABLE_MIDWAY, { code: ErrorCodes.INTERNAL_ERROR }),
      requestStatus: beforeExecution ? 503 : null,
    };
  }
  log.error({ err: error.originalError ?? error, path: error.path }, 'unexpected error in a GraphQL request');
  return {
    formatted: shape(error, INTERNAL_MESSAGE, { code: ErrorCodes.INTERNAL_ERROR }),
    requestStatus: beforeExecution ? 500 : null,
  };
}

/**
 * Mercurius `errorFormatter`. Resolver errors answer HTTP 200 with whatever data succeeded;
 * a request that never ran answers the status of its first error (400 for syntax and validation).
 */
export function formatGraphqlErrors(
  execution: ExecutionResult & { statusCode?: number },
  context: MercuriusContext,
): { statusCode: number; response: { data: ExecutionResult['data'] | null; errors: GraphQLFormattedError[] } } {
  const log: Logger = context.reply?.log ?? context.app.log;
  const executed = execution.data !== undefined && execution.data !== null;
  const results = unwrap(execution.errors ?? []).map((reported) => formatOne(reported, executed, log));
  const requestStatus = results.find((r) => r.requestStatus !== null)?.requestStatus ?? null;
  const statusCode = executed || requestStatus === null ? 200 : requestStatus;
  return { statusCode, response: { data: execution.data ?? null, errors: results.map((r) => r.formatted) } };
}
