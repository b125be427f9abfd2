import type { AccountDoc, TransactionDoc } from '../../shared/domain/types';
import { checkBalanceAlerts } from '../../shared/domain/alerts';
import { batchDebitState, rerateRecord } from '../../shared/domain/ledger';
import { charged } from '../transactions/refund';
import { processingRecovery } from '../transactions/reconcile';
import { recordRecovery } from '../transactions/record';
import type { RerateBatchJob } from '../../shared/domain/queues/payloads';
import {
  enqueueRerateBatch,
  rateAgain,
  RERATE_BATCH_SIZE,
  rerateJobId,
  selectionFilter,
  type ReratingCounts,
  type ReratingDoc,
} from '../../shared/domain/rerating';
import type { TransactionDeps } from '../transactions/deps';

/** Records of one batch corrected at once: each correction is a few writes on its own record and account. */
const PARALLEL = 16;

export interface RerateBatchResult {
  run: string;
  batch: number;
  /** What this batch did; null when the job was stale (its batch already counted) or the run is over. */
  counts: ReratingCounts | null;
}

/**
 * A record the run found 'pending', settled when its charge is done: a call whose end charged it marks
 * it charged after the answer (up to 200 ms later, docs/DECISIONS.md), a recordTransaction decided
 * 'done' marks it after its decision (a worker killed in between leaves it for the sweep), and a run
 * passing it meanwhile would miss the call for good. Settled as the recovery sweep settles it
 * (reconcile.ts, record.ts): charged from the ledger once its running entry is gone, or once its
 * recordTransaction is decided 'done'. Null, counted skipped, for a call still being charged (its entry
 * on the account) and for a recordTransaction not decided yet within its deadline (its answer is not
 * given); past it, the sweep's rule decides (abandoned: refunded and gone).
 */
async function settledPending(deps: TransactionDeps, record: TransactionDoc): Promise<TransactionDoc | null> {
  if (record.record_job) {
    const decision = (await deps.ctx.mongo.collections.outcomes.findOne({ _id: record.record_job })) ?? undefined;
    const due = record.record_deadline !== undefined && record.record_deadline < Date.now();
    if (!decision && !due) return null;
    if ((await recordRecovery.recover(deps, record, decision)) !== 'finished') return null;
  } else if ((await processingRecovery.recover(deps, record, undefined)) !== 'finished') return null;
  const settled = await deps.ctx.mongo.collections.transactions.findOne({ _id: record._id, account_tag: record.account_tag });
  return settled?.state === 'charged' ? settled : null;
}

/**
 * One batch of a rerating run (docs/RERATING.md): the run's next records after its cursor, each rated
 * again and corrected through the ledger (src/shared/domain/ledger/rerate.ts: once per record per run).
 * Then the run moves on, only if it is still at this batch (a retry of a batch already counted changes
 * nothing), and the next batch is queued. A stale job (its batch already counted) makes sure the next
 * one is queued: a crash between moving the run and queueing is then repaired by the retry.
 */
export async function processRerateBatch(deps: TransactionDeps, job: RerateBatchJob): Promise<RerateBatchResult> {
  const { reratings, transactions, accounts } = deps.ctx.mongo.collections;
  const run = await reratings.findOne({ _id: job.rerating_id });
  if (!run || run.state !== 'running') return { run: job.rerating_id, batch: job.batch, counts: null };
  if (job.batch !== run.batch) {
    if (job.batch < run.batch) await enqueueRerateBatch(deps.ctx.queues.imports, run._id, run.batch);
    return { run: run._id, batch: job.batch, counts: null };
  }
  const size = run.batch_size ?? RERATE_BATCH_SIZE;
  const records = await transactions
    .find(selectionFilter(run.selection, run.after, { pending: true }))
    .sort({ _id: 1 })
    .limit(size)
    .toArray();
  // Read fresh: a run is usually started right after a price change, before its announcement may reach this process.
  const index = await deps.rating.freshIndex();
  const tags = [...new Set(records.map((r) => r.account_tag))];
  const found = await accounts.find({ account_tag: { $in: tags } }, { projection: { running_transactions: 0 } }).toArray();
  const byTag = new Map<string, AccountDoc>(found.map((a) => [a.account_tag, a]));
  // An imported record is corrected only once its batch's debit is in the ledger: one whose batch is
  // still settling (or was taken back) owes nothing yet, and a correction would be money without a charge.
  const importBatches = [...new Set(records.filter((r) => r.state === 'imported' && r.charge_op).map((r) => r.charge_op!))];
  const batchStates = new Map(
    await Promise.all(importBatches.map(async (id) => [id, await batchDebitState(deps.ctx.mongo.db, id)] as const)),
  );
  const isCharged = async (record: TransactionDoc) => {
    if (record.state !== 'imported') return true;
    const state = record.charge_op ? batchStates.get(record.charge_op) : undefined;
    if (!state || !('debitedBy' in state)) return false;
    return charged(deps, record, batchStates);
  };
  const counts: ReratingCounts = { seen: records.length, changed: 0, unchanged: 0, skipped: 0 };
  let difference = 0n;
  for (let i = 0; i < records.length; i += PARALLEL) {
    await Promise.all(
      records.slice(i, i + PARALLEL).map(async (read) => {
        const record = read.state === 'pending' ? await settledPending(deps, read) : read;
        if (!record) {
          counts.skipped += 1;
          return;
        }
        const account = byTag.get(record.account_tag);
        const rated = account && (await isCharged(record)) ? rateAgain(index, account, record) : null;
        if (!rated) {
          counts.skipped += 1;
          return;
        }
        const outcome = await rerateRecord(deps.ctx.mongo.collections, record, run._id, rated);
        if (outcome.outcome !== 'changed') {
          counts[outcome.outcome === 'unchanged' ? 'unchanged' : 'skipped'] += 1;
          return;
        }
        counts.changed += 1;
        difference += outcome.after - outcome.before;
        // A rerating may take a prepaid balance below zero (the call happened): the balance alerts say so.
        if (outcome.ledger.outcome === 'applied') {
          const after = outcome.ledger.account;
          void checkBalanceAlerts(deps.ctx, after, after.balance + (outcome.after - outcome.before));
        }
      }),
    );
  }
  const last = records.length < size;
  const now = new Date();
  const moved = await reratings.updateOne(
    { _id: run._id, batch: run.batch },
    {
      $set: {
        batch: run.batch + 1,
        after: records.length > 0 ? records[records.length - 1]._id : run.after,
        updated_at: now,
        ...(last ? { state: 'done' as const, finished_at: now } : {}),
      },
      $inc: {
        'counts.seen': counts.seen,
        'counts.changed': counts.changed,
        'counts.unchanged': counts.unchanged,
        'counts.skipped': counts.skipped,
        difference,
      },
    },
  );
  if (moved.modifiedCount === 1 && !last) await enqueueRerateBatch(deps.ctx.queues.imports, run._id, run.batch + 1);
  deps.ctx.logger.debug({ run: run._id, batch: run.batch, ...counts, difference: difference.toString() }, 'rerating batch done');
  return { run: run._id, batch: job.batch, counts: moved.modifiedCount === 1 ? counts : null };
}

/**
 * Runs still running whose document has not moved for `staleMs`: their next batch is queued again (the
 * job was lost with Redis, or failed for good), from the document alone. A job already queued under
 * that id is left alone; a failed one is retried.
 */
export async function resumeReratings(deps: TransactionDeps, staleMs = 60_000, now: Date = new Date()): Promise<number> {
  const stale = await deps.ctx.mongo.collections.reratings
    .find({ state: 'running', updated_at: { $lt: new Date(now.getTime() - staleMs) } })
    .toArray();
  for (const run of stale) await requeue(deps, run);
  return stale.length;
}

async function requeue(deps: TransactionDeps, run: ReratingDoc): Promise<void> {
  const { imports } = deps.ctx.queues;
  const existing = await imports.getJob(rerateJobId(run._id, run.batch));
  if (existing && (await existing.isFailed())) await existing.retry();
  else if (!existing) await enqueueRerateBatch(imports, run._id, run.batch);
  await deps.ctx.mongo.collections.reratings.updateOne({ _id: run._id, batch: run.batch }, { $set: { updated_at: new Date() } });
}
