import { UnrecoverableError } from 'bullmq';
import {
  applyBatchDebits,
  BatchDebitStateOf,
  claimBatch,
  finishedBatch,
  importBatchId,
  readBatchDebits,
  storeBatchResult,
} from '../../shared/ledger';
import type { ImportBatchJob, ImportBatchResult, ImportRefusal } from '../../shared/queues/payloads';
import type { TransactionDeps } from '../transactions/deps';
import { loadAccounts } from './accounts';
import { LinePlan, planBatch, PlannedRecord } from './plan';
import { existingFees, insertRecords } from './store';

/**
 * Rates, records and debits a batch of finished calls. Every step is idempotent, so an attempt that
 * crashed anywhere, retried, or even run twice at once, ends as one run would:
 *
 *  0. a batch whose result is stored is finished: its result is answered again, nothing is written;
 *  1. read the accounts of the batch (one `$in` read per 200 tags), then claim the batch (insert of its
 *     `import_batches` document); rate every line in memory;
 *  2. insert the callers' records, state 'imported', with one unordered insertMany. Their `_id` is
 *     derived from (batch, account, caller, tag): a duplicate whose `_id` is ours is this batch's own
 *     record from an earlier execution; any other duplicate means the call was recorded by someone
 *     else (the line is a duplicate). The first execution of a batch finding its own records fails
 *     loudly: they were written by a run whose claim is gone, and charging them again could double it;
 *  3. the same for the other parties (linked accounts, inbound receiver) of the lines that are ours;
 *  4. per account, the total of the batch's own records (their fees as stored, not as rated now),
 *     debited once through the ledger (`import:<batch>:<account>`, src/shared/ledger). The first
 *     execution knows no debit of the batch can exist (nobody claimed the batch before its accounts
 *     were read); any other execution (a retry, a rerun, a duplicate delivery) reads the ledger first;
 *  5. store the result on the batch's document: this one write is what makes all its records
 *     charged (TransactionDoc.state 'imported'), instead of marking each record.
 */
export async function processImportBatch(deps: TransactionDeps, job: ImportBatchJob, jobTimestamp: number): Promise<ImportBatchResult> {
  const { ctx } = deps;
  const { accounts } = ctx.mongo.collections;
  const batchId = importBatchId(job.import_id, job.batch);

  const done = await finishedBatch(ctx.mongo.db, batchId);
  if (done) return { ...done.result, replayed: done.job_timestamp !== jobTimestamp };

  const tags = new Set<string>();
  for (const line of job.lines) {
    tags.add(line.account_tag);
    if (line.destination_account_tag) tags.add(line.destination_account_tag);
  }
  const clock = phaseClock();
  const [accountMap, index] = await Promise.all([loadAccounts(accounts, tags), deps.rating.index()]);
  clock.lap('read_accounts');
  // After the read, so that any other execution's debit comes after it and shows as a changed `rev`.
  const first = await claimBatch(ctx.mongo.db, batchId, job.import_id, job.batch);
  clock.lap('claim');
  const plans = planBatch(job.lines, accountMap, index, batchId);
  clock.lap('rate');

  // Steps 2 and 3: which planned records are this batch's own, with their fees as stored.
  const callers = plans.flatMap((p) => (p.kind === 'planned' ? [p.caller] : []));
  const ownCallers = await writeOwn(deps, callers, first, batchId);
  const ownLines = new Set([...ownCallers.keys()].map((r) => r.lineIndex));
  const others = plans.flatMap((p, i) => (p.kind === 'planned' && ownLines.has(i) ? p.others : []));
  const own = new Map([...ownCallers, ...(await writeOwn(deps, others, first, batchId))]);
  clock.lap('insert_records');

  // Step 4: one debit per account for the batch's total.
  const debits = new Map<string, bigint>();
  for (const [record, fee] of own) {
    const tag = record.doc.account_tag;
    debits.set(tag, (debits.get(tag) ?? 0n) + fee);
  }
  for (const [tag, total] of debits) if (total === 0n) debits.delete(tag);
  let initial: Map<string, BatchDebitStateOf>;
  if (first) {
    initial = new Map();
    for (const tag of debits.keys()) {
      const account = accountMap.get(tag);
      if (account) initial.set(tag, { ledgerRev: account.ledger_rev ?? null, settled: false });
    }
  } else {
    initial = await readBatchDebits(ctx.mongo.collections, batchId, [...debits.keys()]);
  }
  await applyBatchDebits(ctx.mongo.collections, batchId, debits, initial);
  clock.lap('debit_accounts');

  // Step 5.
  const result = summarize(batchId, job, plans, own);
  await storeBatchResult(ctx.mongo.db, batchId, jobTimestamp, result);
  clock.lap('store_result');
  // Per-phase milliseconds: bench:import --profile sums them to show where an import's time goes.
  ctx.logger.debug({ batch: batchId, lines: result.lines, rated: result.rated, accounts_debited: debits.size, phase_ms: clock.phases }, 'import batch done');
  return result;
}

function phaseClock() {
  const phases: Record<string, number> = {};
  let last = performance.now();
  return {
    phases,
    lap(name: string) {
      const now = performance.now();
      phases[name] = Math.round((now - last) * 10) / 10;
      last = now;
    },
  };
}

/**
 * Inserts records and returns those that are this batch's own (just inserted, or by an earlier
 * execution), each with its fee as stored.
 */
async function writeOwn(deps: TransactionDeps, records: PlannedRecord[], first: boolean, batchId: string): Promise<Map<PlannedRecord, bigint>> {
  const { transactions } = deps.ctx.mongo.collections;
  const duplicates = await insertRecords(transactions, records.map((r) => r.doc));
  const dupRecords = records.filter((_, i) => duplicates.has(i));
  const stored = dupRecords.length > 0 ? await existingFees(transactions, dupRecords.map((r) => r.doc._id)) : new Map<string, bigint>();
  if (first && stored.size > 0) {
    throw new UnrecoverableError(
      `import batch ${batchId}: ${stored.size} of its records exist but the batch has no claim (import_batches document removed?); ` +
        'refusing to charge them again: restore the batch document or use another import id',
    );
  }
  const own = new Map<PlannedRecord, bigint>();
  records.forEach((record, i) => {
    if (!duplicates.has(i)) own.set(record, record.doc.fee);
    else if (stored.has(record.doc._id)) own.set(record, stored.get(record.doc._id)!);
  });
  return own;
}

function summarize(batchId: string, job: ImportBatchJob, plans: LinePlan[], own: ReadonlyMap<PlannedRecord, bigint>): ImportBatchResult {
  const refused: ImportRefusal[] = [];
  const duplicateLines: number[] = [];
  let rated = 0;
  let charged = 0n;
  let chargedLinked = 0n;
  plans.forEach((plan, i) => {
    const line = job.lines[i].line;
    if (plan.kind === 'refused') refused.push({ line, reason: plan.reason, ...(plan.account_tag ? { account_tag: plan.account_tag } : {}) });
    else if (plan.kind === 'duplicate' || !own.has(plan.caller)) duplicateLines.push(line);
    else {
      rated += 1;
      charged += own.get(plan.caller)!;
      for (const other of plan.others) if (own.has(other) && !other.inbound) chargedLinked += own.get(other)!;
    }
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
