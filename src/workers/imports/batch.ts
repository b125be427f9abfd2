import { UnrecoverableError } from 'bullmq';
import {
  applyBatchDebits,
  BatchDebitStateOf,
  debitStateOf,
  opIds,
  batchDigest,
  BatchContentMismatch,
  checkBatchContent,
  claimBatch,
  finishedBatch,
  importBatchId,
  importRecordId,
  markBatchDecided,
  readBatchDebits,
  storeBatchResult,
  storeDeferredBatchResult,
} from '../../shared/domain/ledger';
import type { AccountDoc, TransactionDoc } from '../../shared/domain/types';
import type { ImportBatchJob, ImportBatchResult, ImportRefusal } from '../../shared/domain/queues/payloads';
import { decideByDeadline } from '../transactions/decide';
import type { TransactionDeps } from '../transactions/deps';
import { phaseClock, type PhaseClock } from '../../shared/infra/phase-clock';
import { undoAgentBatch } from './undo';
import { loadAccounts } from './accounts';
import { LinePlan, planBatch, PlannedRecord } from './plan';
import { existingFees, insertRecords } from './store';
import { done } from '../../shared/domain/calls';

/**
 * Rates, records and debits a batch of finished calls. Every step is idempotent, so an attempt that
 * crashed anywhere, retried, or even run twice at once, ends as one run would:
 *
 *  0. a batch whose result is stored is finished: its result is answered again, nothing is written;
 *  1. read the accounts of the batch (one `$in` read per 100 tags; a file batch in a worker process takes
 *     those its worker read for the import already, src/workers/imports/account-cache.ts), then claim the batch (insert of its
 *     `import_batches` document); rate every line in memory;
 *  2. insert the callers' records, state 'imported', with one unordered insertMany. Their `_id` is
 *     derived from (batch, account, caller, tag): a duplicate whose `_id` is ours is this batch's own
 *     record from an earlier execution; any other duplicate means the call was recorded by someone
 *     else (the line is a duplicate). The first execution of a batch finding its own records fails
 *     loudly: they were written by a run whose claim is gone, and charging them again could double it;
 *  3. the same for the other parties (linked accounts, inbound receiver) of the lines that are ours;
 *  4. per account, the total of the batch's own records. The first execution knows its own records are
 *     those it just wrote. Any other execution (a retry, a rerun, a duplicate delivery) takes every
 *     record the batch ever wrote as stored (by `charge_op`), not as it would rate them now (a rate or
 *     an account may have changed since);
 *  5. a file batch stores its result with these totals, for a settlement to debit together with other
 *     batches' (src/shared/domain/ledger/settlements.ts); an agent batch debits them once through the ledger
 *     (`import:<batch>:<account>`) and then stores its result. Either way, one write on the batch's
 *     document makes all its records charged once the debit is in the ledger (TransactionDoc.state
 *     'imported'), instead of marking each record.
 */
export async function processImportBatch(deps: TransactionDeps, job: ImportBatchJob, jobTimestamp: number): Promise<ImportBatchResult> {
  const { ctx } = deps;
  const { accounts } = ctx.mongo.collections;
  const batchId = importBatchId(job.import_id, job.batch);

  const digest = batchDigest(job.lines);
  const done = await finishedBatch(ctx.mongo.db, batchId);
  try {
    if (done) checkBatchContent(done, digest);
  } catch (err) {
    permanent(err);
  }
  if (done && (job.deadline === null || done.decided_at)) {
    const replayed = done.job_timestamp !== jobTimestamp;
    return { ...done.result, replayed, ...(replayed ? { finished_by_job: done.job_timestamp } : {}) };
  }
  if (done) return concludeAgentBatch(deps, job, batchId, done.result);

  const tags = new Set<string>();
  for (const line of job.lines) {
    tags.add(line.account_tag);
    if (line.destination_account_tag) tags.add(line.destination_account_tag);
  }
  const clock = phaseClock();
  const accountsRead =
    job.deadline !== null
      ? loadAccounts(accounts, tags)
      : (deps.importAccounts?.accountsFor(accounts, job.import_id, tags) ?? loadAccounts(accounts, tags, false));
  const [accountMap, index] = await Promise.all([accountsRead, deps.rating.index()]);
  clock.lap('read_accounts');
  // After the read, so that any other execution's debit comes after it and shows as a changed `ledger_rev`.
  const first = await claimBatch(ctx.mongo.db, batchId, job.import_id, job.batch, job.deadline, digest).catch(permanent);
  clock.lap('claim');
  const plans = planBatch(job.lines, accountMap, index, batchId);
  clock.lap('rate');

  // Steps 2 and 3: which records are this batch's own.
  const callers = plans.flatMap((p) => (p.kind === 'planned' ? [p.caller] : []));
  const ownCallers = await writeOwn(deps, callers, first, batchId);
  const ownLines = new Set(ownCallers.map((r) => r.lineIndex));
  const others = plans.flatMap((p, i) => (p.kind === 'planned' && ownLines.has(i) ? p.others : []));
  const written: OwnRecord[] = [...ownCallers, ...(await writeOwn(deps, others, first, batchId))].map((r) => r.doc);
  const own = first ? written : await storedRecordsOf(deps, batchId);
  clock.lap('insert_records');

  // Step 4: one total per account, also a total of 0 (calls that were free): its debit entry is what
  // proves those records charged, so a rerating at a corrected price charges them (docs/RERATING.md).
  const debits = new Map<string, bigint>();
  for (const record of own) debits.set(record.account_tag, (debits.get(record.account_tag) ?? 0n) + record.fee);
  const result = summarize(batchId, job, plans, own);

  // Step 5.
  if (job.deadline === null) {
    // A file batch whose own debits are (partly) applied was started by a version that debited file
    // batches itself: it finishes that way, or its settlement would charge those accounts again.
    const started = first ? null : await readBatchDebits(ctx.mongo.collections, batchId, [...debits.keys()]);
    if (!started || ![...started.values()].some((s) => s.applied)) {
      await storeDeferredBatchResult(
        ctx.mongo.db,
        batchId,
        jobTimestamp,
        result,
        [...debits].map(([account_tag, amount]) => ({ account_tag, amount })),
      );
      clock.lap('store_result');
      ctx.logger.debug(
        { batch: batchId, lines: result.lines, rated: result.rated, accounts_to_settle: debits.size, phase_ms: clock.phases },
        'import batch done',
      );
      return result;
    }
    await debitNow(deps, batchId, jobTimestamp, result, debits, started, clock);
    return result;
  }
  const initial = first
    ? initialFromRead(accountMap, batchId, debits)
    : await readBatchDebits(ctx.mongo.collections, batchId, [...debits.keys()]);
  await debitNow(deps, batchId, jobTimestamp, result, debits, initial, clock);
  return concludeAgentBatch(deps, job, batchId, result);
}

/** The debit state of each account from the read made before the batch was first claimed (no debit of it can exist). */
function initialFromRead(
  accountMap: ReadonlyMap<string, Pick<AccountDoc, 'ledger_rev' | 'import_marker'>>,
  batchId: string,
  debits: ReadonlyMap<string, bigint>,
): Map<string, BatchDebitStateOf> {
  const initial = new Map<string, BatchDebitStateOf>();
  for (const tag of debits.keys()) {
    const account = accountMap.get(tag);
    if (account) initial.set(tag, debitStateOf(account, opIds.importDebit(batchId, tag)));
  }
  return initial;
}

/** Debits the batch's totals under its own id (`import:<batch>:<account>`), then stores its result. */
async function debitNow(
  deps: TransactionDeps,
  batchId: string,
  jobTimestamp: number,
  result: ImportBatchResult,
  debits: ReadonlyMap<string, bigint>,
  initial: ReadonlyMap<string, BatchDebitStateOf>,
  clock: PhaseClock,
): Promise<void> {
  const { ctx } = deps;
  clock.lap('debit_prepare');
  const { conflicts } = await applyBatchDebits(ctx.mongo.collections, ctx.mongo.db, batchId, debits, initial, (phase) => clock.lap(phase));
  await storeBatchResult(ctx.mongo.db, batchId, jobTimestamp, result);
  clock.lap('store_result');
  // Per-phase milliseconds: bench:import --profile sums them to show where an import's time goes.
  ctx.logger.debug(
    {
      batch: batchId,
      lines: result.lines,
      rated: result.rated,
      accounts_debited: debits.size,
      debit_conflicts: conflicts,
      phase_ms: clock.phases,
    },
    'import batch done',
  );
}

/**
 * An agent batch (recordTransactions) stands only if decided 'done' while its caller still waits
 * (src/shared/domain/calls/decisions.ts, under the batch id); abandoned, by the agent or here past the deadline,
 * it is taken back, and every line answers TIMEOUT.
 */
async function concludeAgentBatch(
  deps: TransactionDeps,
  job: ImportBatchJob,
  batchId: string,
  result: ImportBatchResult,
): Promise<ImportBatchResult> {
  const ref = { jobId: batchId, op: 'record-batch', account_tag: job.lines[0]?.account_tag ?? '', transaction_tag: '' };
  const { state } = await decideByDeadline(deps, ref, job.deadline ?? 0, done());
  if (state === 'abandoned') return undoAgentBatch(deps, batchId, job.lines);
  await markBatchDecided(deps.ctx.mongo.db, batchId);
  return result;
}

/** What the debit and the summary need of a record the batch owns, as stored. */
type OwnRecord = Pick<TransactionDoc, '_id' | 'account_tag' | 'origin_account_tag' | 'transaction_tag' | 'inbound' | 'fee'>;

/** Every record the batch wrote, in any execution. */
function storedRecordsOf(deps: TransactionDeps, batchId: string): Promise<OwnRecord[]> {
  return deps.ctx.mongo.collections.transactions
    .find({ charge_op: batchId }, { projection: { _id: 1, account_tag: 1, origin_account_tag: 1, transaction_tag: 1, inbound: 1, fee: 1 } })
    .toArray();
}

/**
 * Inserts records and returns those that are this batch's own (just inserted, or by an earlier
 * execution). In a first execution, finding its own records means an earlier run lost its claim.
 */
async function writeOwn(deps: TransactionDeps, records: PlannedRecord[], first: boolean, batchId: string): Promise<PlannedRecord[]> {
  const { transactions } = deps.ctx.mongo.collections;
  const duplicates = await insertRecords(
    transactions,
    records.map((r) => r.doc),
  );
  const dupRecords = records.filter((_, i) => duplicates.has(i));
  const stored =
    dupRecords.length > 0
      ? await existingFees(
          transactions,
          dupRecords.map((r) => r.doc),
        )
      : new Map<string, bigint>();
  if (first && stored.size > 0) {
    throw new UnrecoverableError(
      `import batch ${batchId}: ${stored.size} of its records exist but the batch has no claim (import_batches document removed?); ` +
        'refusing to charge them again: restore the batch document or use another import id',
    );
  }
  return records.filter((record, i) => !duplicates.has(i) || stored.has(record.doc._id));
}

/**
 * Each line's fate, from the records the batch owns: a line whose caller record is the batch's own is
 * rated (charged what its records say, even if it would be refused now); otherwise it is refused,
 * or a duplicate (of an earlier line, or of a call recorded by someone else).
 */
function summarize(batchId: string, job: ImportBatchJob, plans: LinePlan[], own: readonly OwnRecord[]): ImportBatchResult {
  const refused: ImportRefusal[] = [];
  const duplicateLines: number[] = [];
  let rated = 0;
  let charged = 0n;
  let chargedLinked = 0n;
  const byId = new Map(own.map((r) => [r._id, r]));
  const callKey = (origin: string | undefined, tag: string) => `${origin ?? ''}\0${tag}`;
  const linkedFees = new Map<string, bigint>();
  for (const r of own) {
    if (r.account_tag !== r.origin_account_tag && !r.inbound) {
      const key = callKey(r.origin_account_tag, r.transaction_tag);
      linkedFees.set(key, (linkedFees.get(key) ?? 0n) + r.fee);
    }
  }
  const counted = new Set<string>();
  plans.forEach((plan, i) => {
    const { line, account_tag: caller, transaction_tag: tag } = job.lines[i];
    // A planned line's caller record carries the id already; a refused one may still own a record from an earlier execution.
    const callerRecord = byId.get(plan.kind === 'planned' ? plan.caller.doc._id : importRecordId(batchId, caller, caller, tag));
    if (callerRecord && !counted.has(callerRecord._id)) {
      counted.add(callerRecord._id);
      rated += 1;
      charged += callerRecord.fee;
      chargedLinked += linkedFees.get(callKey(caller, tag)) ?? 0n;
    } else if (plan.kind === 'refused')
      refused.push({ line, reason: plan.reason, ...(plan.account_tag ? { account_tag: plan.account_tag } : {}) });
    else duplicateLines.push(line);
  });
  return {
    batch_id: batchId,
    lines: job.lines.length,
    rated,
    duplicate_lines: duplicateLines,
    refused,
    charged: charged.toString(),
    charged_linked: chargedLinked.toString(),
    replayed: false,
  };
}

/** A batch of other lines than its claim's fails for good: a retry would meet the same claim. */
function permanent(err: unknown): never {
  throw err instanceof BatchContentMismatch ? new UnrecoverableError(err.message) : err;
}
