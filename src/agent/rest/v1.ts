import type { FastifyPluginAsync } from 'fastify';
import { ServiceError } from '../../shared/infra/errors';
import type { AgentOperations, Input, OperationName } from '../operations';
import type { OperationKey } from '../../shared/domain/calls/operations';
import { ErrorCodes } from '../../shared/infra/errors';

/** Each operation's path; the OpenAPI document (rest/openapi.ts) reads the same table. */
export const restPaths: Record<OperationKey, string> = {
  authorization: '/v1/authorization',
  begin: '/v1/begin_transaction',
  end: '/v1/end_transaction',
  record: '/v1/record_transaction',
  rollback: '/v1/rollback_transaction',
};

/**
 * The JSON mirror for SIP proxies (Kamailio, OpenSIPS): the same fields as the GraphQL operations in a
 * flat JSON body, the same answers. Bad input answers 400 with the error code and field.
 */
export const restV1: FastifyPluginAsync<{ operations: AgentOperations }> = async (app, { operations }) => {
  app.setErrorHandler((err: Error, request, reply) => {
    if (err instanceof ServiceError) {
      return reply.code(400).send({ error: { code: err.code, message: err.message, ...err.details } });
    }
    const status = (err as { statusCode?: number }).statusCode;
    if (status && status < 500) {
      return reply.code(status).send({ error: { code: ErrorCodes.BAD_USER_INPUT, message: err.message } });
    }
    request.log.error({ err }, 'agent REST operation failed');
    return reply.code(500).send({ error: { code: ErrorCodes.INTERNAL_ERROR, message: 'internal error' } });
  });
  const body = (request: { body: unknown }): Input => {
    if (typeof request.body !== 'object' || request.body === null || Array.isArray(request.body)) {
      throw new ServiceError('BAD_USER_INPUT', 'the body must be a JSON object');
    }
    return request.body as Input;
  };
  app.post(restPaths.authorization, async (request) => operations.authorization(body(request)));
  for (const op of ['begin', 'end', 'record', 'rollback'] as const satisfies OperationName[]) {
    app.post(restPaths[op], async (request) => operations.run(op, body(request)));
  }
};
