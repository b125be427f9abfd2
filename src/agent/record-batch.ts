import type { QueueEvents } from 'bullmq';
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../shared/domain/context';
import { badInput, ErrorCodes, ServiceError } from '../shared/infra/errors';
import { QueueNames } from '../shared/domain/queues/names';
import type { ImportBatchResult, ImportLine } from '../shared/domain/queues/payloads';
import { bullmqPrefix, createQueueEvents } from '../shared/domain/queues/queues';
import { finishedBatch, importBatchId } from '../shared/domain/ledger';
import { decideAbandonedWithin } from '../shared/domain/calls/decisions';
import { abandonWriteMs, type Input } from './operations';
import type { RecordItemResult } from './answers';
import { validateRecordLine } from '../shared/domain/imports/validate-record';
import { withinOrFail } from '../shared/infra/time-limit';
import { type Reason, Reasons } from '../shared/domain/calls';

/** Moved to src/shared/domain/imports (the CLI and the management API's uploads use it too); re-exported for the agent's callers. */
export { validateRecordLine };

export type { RecordItemResult } from './answers';

/**
 * recordTransactions: up to RECORD_BATCH_MAX calls in one request. Each item is validated on its own
 * (a bad one answers `BAD_USER_INPUT: <field>: ...` while the others proceed); the valid ones go to a
 * worker as one batch on the `imports` queue (rated in memory, written and debited in bulk) and each
 * gets its own answer: ok, or the reason recordTransaction would give.
 */
export class RecordBatchService {
  private constructor(
    private readonly ctx: AppContext,
    private readonly events: QueueEvents,
  ) {}

  static async start(ctx: AppContext): Promise<RecordBatchService> {
    const events = createQueueEvents(ctx.newRedis(), bullmqPrefix(ctx.config), QueueNames.imports);
    // The connection is closed with the context; that ends the event loop with an error we expect.
    events.on('error', (err) => ctx.logger.debug({ err }, 'imports queue events'));
    // Not waited for here: a first request while Redis is away must still answer in time (record()).
    events.waitUntilReady().catch(() => undefined);
    return new RecordBatchService(ctx, events);
  }

  async close(): Promise<void> {
    await this.events.close().catch(() => undefined);
  }

  async record(items: unknown[]): Promise<RecordItemResult[]> {
    const max = this.ctx.config.recordBatchMax;
    if (items.length > max) throw badInput('transactions', `must hold at most ${max} calls (RECORD_BATCH_MAX)`);
    const now = new Date();
    const deadline = now.getTime() + this.ctx.config.agentTimeoutMs;
    const results: RecordItemResult[] = [];
    const lines: ImportLine[] = [];
    items.forEach((item, index) => {
      const input = (typeof item === 'object' && item !== null ? item : {}) as Input;
      const tag = typeof input.transaction_tag === 'string' ? input.transaction_tag : null;
      results.push({ index, transaction_tag: tag, ok: true, reason: null });
      try {
        lines.push(validateRecordLine(input, index, now));
      } catch (err) {
        if (!(err instanceof ServiceError) || err.code !== ErrorCodes.BAD_USER_INPUT) throw err;
        results[index] = { index, transaction_tag: tag, ok: false, reason: `${err.code}: ${err.message}` };
      }
    });
    if (lines.length === 0) return results;

    const importId = `api-${randomUUID()}`;
    const batchId = importBatchId(importId, 0);
    let outcome: ImportBatchResult | null = null;
    let failure: Reason = Reasons.TIMEOUT;
    try {
      // The events stream is read before the job is added, or its completion could pass unseen.
      await byDeadline(this.events.waitUntilReady(), deadline);
      const job = await byDeadline(
        this.ctx.queues.imports.add('record-batch', { import_id: importId, batch: 0, lines, deadline }, { jobId: batchId }),
        deadline,
      );
      // At least 1 ms: BullMQ reads a ttl of 0 as no limit at all (an add landing in the deadline's millisecond).
      outcome = (await job.waitUntilFinished(this.events, Math.max(1, deadline - Date.now()))) as ImportBatchResult;
    } catch (err) {
      if (!/timed out/i.test((err as Error).message ?? '')) {
        this.ctx.logger.warn({ err, batch: batchId }, 'recordTransactions batch failed: answered UNAVAILABLE');
        failure = Reasons.UNAVAILABLE;
      }
      outcome = await this.abandon(batchId).catch((abandonErr: unknown) => {
        this.ctx.logger.error(
          { err: abandonErr, batch: batchId },
          'could not record the batch abandoned: answered OUTCOME_UNKNOWN; the worker or the recovery sweep settles it',
        );
        failure = Reasons.OUTCOME_UNKNOWN;
        return null;
      });
    }
    const refused = new Map((outcome?.refused ?? []).map((r) => [r.line, r.reason]));
    const duplicates = new Set(outcome?.duplicate_lines ?? []);
    for (const { line } of lines) {
      const reason = !outcome ? failure : (refused.get(line) ?? (duplicates.has(line) ? Reasons.DUPLICATE_TRANSACTION : null));
      results[line] = { ...results[line], ok: reason === null, reason };
    }
    return results;
  }

  /**
   * Records the batch abandoned (src/shared/domain/calls/decisions.ts), so a worker that has written it takes it back
   * and the TIMEOUT answered is true; if the worker decided 'done' first, its stored result is the answer.
   */
  private async abandon(batchId: string): Promise<ImportBatchResult | null> {
    const ref = { jobId: batchId, op: 'record-batch', account_tag: '', transaction_tag: '' };
    const decision = await decideAbandonedWithin(this.ctx.mongo.collections, ref, abandonWriteMs(this.ctx.config));
    if (decision.won || decision.doc.state !== 'done') return null;
    // Decided 'done': its result is the answer, read within the same bound (unread, the outcome is unknown).
    const stored = await withinOrFail(
      finishedBatch(this.ctx.mongo.db, batchId),
      abandonWriteMs(this.ctx.config),
      () => new Error(`the result of batch ${batchId}, decided done, could not be read in time`),
    );
    return stored?.result ?? null;
  }
}

/**
 * A step before the wait, bounded by the deadline: while Redis is unreachable ioredis holds a command (it
 * reconnects without end), and the answer must still come within AGENT_TIMEOUT_MS + AGENT_ABANDON_MS. Past
 * the deadline the batch is recorded abandoned (the caller's catch), so an add that lands later is taken
 * back by its worker. The late step's own failure, if any, has nobody to tell.
 */
function byDeadline<T>(step: Promise<T>, deadline: number): Promise<T> {
  return withinOrFail(
    step,
    deadline - Date.now(),
    () => new Error('the imports queue did not take the batch before its deadline (Redis unreachable?)'),
  );
}

/** One service per process context, started on first use (the GraphQL module and the REST route share it). */
const services = new WeakMap<AppContext, Promise<RecordBatchService>>();

export function recordBatchService(ctx: AppContext): Promise<RecordBatchService> {
  let service = services.get(ctx);
  if (!service) {
    service = RecordBatchService.start(ctx);
    services.set(ctx, service);
    service.catch(() => services.delete(ctx));
  }
  return service;
}

/** Closes the service if this context started one. */
export async function closeRecordBatchService(ctx: AppContext): Promise<void> {
  const service = services.get(ctx);
  services.delete(ctx);
  if (service) await (await service.catch(() => null))?.close();
}
