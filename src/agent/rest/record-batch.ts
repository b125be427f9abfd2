import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../shared/domain/context';
import { ServiceError } from '../../shared/infra/errors';
import { closeRecordBatchService, recordBatchService } from '../record-batch';
import { ErrorCodes } from '../../shared/infra/errors';

export const RECORD_BATCH_PATH = '/v1/record_transactions';

/**
 * POST /v1/record_transactions: `{ "transactions": [ {...}, ... ] }` (a bare array is accepted too),
 * answering `{ "results": [ { index, transaction_tag, ok, reason }, ... ] }`, as the GraphQL mutation.
 */
export const recordBatchRest: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.setErrorHandler((err: Error, request, reply) => {
    if (err instanceof ServiceError) {
      return reply.code(400).send({ error: { code: err.code, message: err.message, ...err.details } });
    }
    const status = (err as { statusCode?: number }).statusCode;
    if (status && status < 500) return reply.code(status).send({ error: { code: ErrorCodes.BAD_USER_INPUT, message: err.message } });
    request.log.error({ err }, 'record_transactions failed');
    return reply.code(500).send({ error: { code: ErrorCodes.INTERNAL_ERROR, message: 'internal error' } });
  });
  app.addHook('onClose', () => closeRecordBatchService(ctx));
  app.post(RECORD_BATCH_PATH, async (request) => {
    const body = request.body as unknown;
    const items = Array.isArray(body) ? body : (body as { transactions?: unknown } | null)?.transactions;
    if (!Array.isArray(items))
      throw new ServiceError('BAD_USER_INPUT', 'transactions: the body must be { "transactions": [...] }', { field: 'transactions' });
    return { results: await (await recordBatchService(ctx)).record(items) };
  });
};
