import type { FastifyPluginAsync } from 'fastify';
import { serviceVersion } from '../../shared/infra/version';
import { answerTypes, authorizationAnswerFields, operationAnswerFields, recordItemAnswerFields, type AnswerField } from '../answers';
import { kinds, type FieldTable, type JsonSchema } from '../../shared/domain/validation/fields';
import { operationFields, type OperationKey } from '../../shared/domain/calls/operations';
import { RECORD_BATCH_PATH } from './record-batch';
import { restPaths } from './v1';

/**
 * The OpenAPI document of the agent's REST mirror, served at /v1/openapi.json as Canyan's agent serves
 * one. It is built from the tables that validate requests (validation.ts, fields.ts) and describe
 * answers (answers.ts), so it says what the agent does, not what someone remembered to write down.
 */

export const OPENAPI_PATH = '/v1/openapi.json';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** A request body's schema: each field's kind, its limits and its description. Unknown members are ignored. */
export function requestSchema(table: FieldTable): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const [name, spec] of Object.entries(table)) {
    properties[name] = {
      description: `${spec.description} ${kinds[spec.kind].accepts}`,
      ...kinds[spec.kind].schema(spec.presence !== 'required'),
    };
  }
  const required = Object.entries(table)
    .filter(([, spec]) => spec.presence === 'required')
    .map(([name]) => name);
  return { type: 'object', properties, required };
}

function answerSchema(table: Record<string, AnswerField>): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const [name, field] of Object.entries(table)) {
    const schema = answerTypes[field.type].schema;
    properties[name] = { description: field.description, ...schema, type: field.nullable ? [schema.type, 'null'] : schema.type };
  }
  return { type: 'object', properties, required: Object.keys(table) };
}

const operations: Record<OperationKey, { operationId: string; request: string; answer: string; summary: string }> = {
  authorization: {
    operationId: 'authorization',
    request: 'AuthorizationRequest',
    answer: 'AuthorizationAnswer',
    summary:
      'Whether a call may start now, how long it may last and which carriers to try; with a transaction_tag, reserves a concurrency slot',
  },
  begin: {
    operationId: 'beginTransaction',
    request: 'BeginTransactionRequest',
    answer: 'TransactionAnswer',
    summary: 'A call starts: it runs against the concurrency limit and the prepaid balance',
  },
  end: {
    operationId: 'endTransaction',
    request: 'EndTransactionRequest',
    answer: 'TransactionAnswer',
    summary: 'A running call ends; it is then rated, recorded and charged',
  },
  record: {
    operationId: 'recordTransaction',
    request: 'RecordTransactionRequest',
    answer: 'TransactionAnswer',
    summary: 'A finished call is rated, recorded and charged in one request',
  },
  rollback: {
    operationId: 'rollbackTransaction',
    request: 'RollbackTransactionRequest',
    answer: 'TransactionAnswer',
    summary: 'A call is removed: a running one without charge, a recorded one refunded',
  },
};

const jsonBody = (schema: JsonSchema) => ({ content: { 'application/json': { schema } } });

/** Answers every operation shares: bad input, and the refusals made before the operation runs. */
const errorResponses = {
  '400': { $ref: '#/components/responses/BadUserInput' },
  '401': { $ref: '#/components/responses/Unauthenticated' },
  '403': { $ref: '#/components/responses/Forbidden' },
  '413': { $ref: '#/components/responses/PayloadTooLarge' },
  '415': { $ref: '#/components/responses/UnsupportedMediaType' },
  '429': { $ref: '#/components/responses/RateLimited' },
  '500': { $ref: '#/components/responses/InternalError' },
};

const requestError: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', description: 'BAD_USER_INPUT (INTERNAL_ERROR on a 500)' },
        message: { type: 'string', description: '"<field>: <problem>" for a bad field' },
        field: { type: 'string', description: 'The field refused, when one was' },
      },
    },
  },
  example: {
    error: {
      code: 'BAD_USER_INPUT',
      message: 'timestamp_begin: must be a datetime like 2026-01-31T12:00:00Z or epoch seconds like 1763912345.123456',
      field: 'timestamp_begin',
    },
  },
};

/** Authentication, scopes and the rate limit answer in the GraphQL error shape on every route (src/shared/infra/http/error-reply.ts). */
const accessError: JsonSchema = {
  type: 'object',
  required: ['errors'],
  properties: {
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['message', 'extensions'],
        properties: {
          message: { type: 'string' },
          extensions: {
            type: 'object',
            required: ['code'],
            properties: { code: { type: 'string', enum: ['UNAUTHENTICATED', 'FORBIDDEN', 'RATE_LIMITED'] } },
          },
        },
      },
    },
  },
};

/** The document, for a deployment's RECORD_BATCH_MAX. */
export function openapiDocument(options: { recordBatchMax: number }): JsonSchema {
  const paths: Record<string, JsonSchema> = {};
  for (const [op, { operationId, request, answer, summary }] of Object.entries(operations)) {
    paths[restPaths[op as OperationKey]] = {
      post: {
        operationId,
        summary,
        requestBody: { required: true, ...jsonBody(ref(request)) },
        responses: {
          '200': { description: 'The answer; a business refusal is a 200 with its reason', ...jsonBody(ref(answer)) },
          ...errorResponses,
        },
      },
    };
  }
  paths[RECORD_BATCH_PATH] = {
    post: {
      operationId: 'recordTransactions',
      summary: `Up to ${options.recordBatchMax} finished calls in one request (RECORD_BATCH_MAX), each answered on its own: a bad item is that item's BAD_USER_INPUT`,
      requestBody: { required: true, ...jsonBody(ref('RecordTransactionsRequest')) },
      responses: {
        '200': { description: "Each item's answer, in request order", ...jsonBody(ref('RecordTransactionsAnswer')) },
        ...errorResponses,
      },
    },
  };
  const schemas: Record<string, JsonSchema> = {
    TransactionAnswer: answerSchema(operationAnswerFields),
    AuthorizationAnswer: answerSchema(authorizationAnswerFields),
    RecordTransactionsRequest: {
      description: 'The calls, each with the fields of recordTransaction; a bare array of calls is accepted too.',
      type: 'object',
      required: ['transactions'],
      properties: { transactions: { type: 'array', maxItems: options.recordBatchMax, items: ref('RecordTransactionRequest') } },
    },
    RecordTransactionsAnswer: {
      type: 'object',
      required: ['results'],
      properties: { results: { type: 'array', items: answerSchema(recordItemAnswerFields) } },
    },
    RequestError: requestError,
    AccessError: accessError,
  };
  for (const [op, { request }] of Object.entries(operations)) schemas[request] = requestSchema(operationFields[op as OperationKey]);
  const errorBody = (description: string, schema: string) => ({ description, ...jsonBody(ref(schema)) });
  return {
    openapi: '3.1.0',
    info: {
      title: 'Call rating agent',
      version: serviceVersion,
      description:
        'The JSON mirror of the agent for SIP proxies (Kamailio, OpenSIPS): the fields of the GraphQL operations in a flat JSON body. ' +
        "Answers carry Canyan's fields, so Canyan's clients work unchanged. An optional field may be absent, null or an empty string.",
    },
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'A token with the agent scope. Not needed when the service runs without tokens (development).',
        },
      },
      schemas,
      responses: {
        BadUserInput: errorBody(
          'Bad input: a missing or invalid field (named), or a body that is not a JSON object. Nothing was done.',
          'RequestError',
        ),
        Unauthenticated: errorBody('No bearer token, or an invalid or revoked one', 'AccessError'),
        Forbidden: errorBody('The token lacks the agent scope', 'AccessError'),
        PayloadTooLarge: errorBody('The body is larger than BODY_LIMIT_BYTES. Nothing was done.', 'RequestError'),
        UnsupportedMediaType: errorBody('The body is not sent as application/json. Nothing was done.', 'RequestError'),
        RateLimited: errorBody('Over the per-token rate limit; Retry-After says when to retry', 'AccessError'),
        InternalError: errorBody('An unexpected failure; nothing internal is revealed', 'RequestError'),
      },
    },
  };
}

/**
 * GET /v1/openapi.json, built once. Served without a token, like /health (src/agent/app.ts opens the
 * path): it describes the interface, reveals no data, and a client generator must be able to read it
 * before it holds a token.
 */
export const openapiRest: FastifyPluginAsync<{ recordBatchMax: number }> = async (app, options) => {
  const document = JSON.stringify(openapiDocument(options));
  app.get(OPENAPI_PATH, async (_request, reply) => reply.type('application/json; charset=utf-8').send(document));
};
