import type { ImportBatchJob, ImportBatchResult, ImportRefusal } from '../../shared/queues/payloads';
import type { TransactionDeps } from '../transactions/deps';
import { loadAccounts, reloadDebitState } from './accounts';
import { applyDebits, DebitState } from './debits';
import { importBatchId } from './ids';
import { LinePlan, planBatch, PlannedRecord } from './plan';
import { claimBatch, finishedBatch, releaseBatch, storeBatchResult } from './registry';
import { insertRecords, markCharged, ownRecordStates } from './store';

/**
 * Rates, records and debits a batch of finished calls. Every step is idempotent, so an attempt that
 * crashed anywhere, retried, or even run twice at once, ends as one run would:
 *
 *  1. rate all lines in memory (one `$in` read of the accounts per 200 tags), then claim the batch;
 *  2. insert the callers' records, `pending`, with one unordered insertMany. Their `_id` is derived
 *     from (batch, account, tag): a duplicate whose `_id` is ours is this batch's own record from an
 *     earlier attempt; any other duplicate means the call was recorded by someone else (line = duplicate);
 *  3. the same for the other parties (linked accounts, inbound receiver) of the lines that are ours;
 *  4. per account, the total of the batch's own records, debited once (marker = batch id, see debits.ts).
 *     An account any of whose own records is already 'charged' was debited (records are only marked
 *     after their debit), so it is skipped; the set of own records is fixed once step 2/3 completed
 *     in any attempt, so every attempt computes the same totals. The first execution of a batch knows
 *     no marker of it can exist (nobody claimed the batch before its accounts were read); any other
 *     execution (a retry, a rerun, a duplicate delivery) reads the markers first;
 *  5. mark the batch's own pending records 'charged';
 *  6. store the result (file imports: a rerun of the same file skips the batch) or drop the claim.
 */
export async function processImportBatch(deps: TransactionDeps, job: ImportBatchJob, jobTimestamp: number): Promise<ImportBatchResult> {
  const { ctx } = deps;
  const { accounts, transactions } = ctx.mongo.collections;
  const batchId = importBatchId(job.import_id, job.batch);

  if (job.keep_result) {
    const done = await finishedBatch(ctx.mongo.db, batchId);
    if (done) return { ...done.result, replayed: done.job_timestamp !== jobTimestamp };
  }

  const tags = new Set<string>();
  for (const line of job.lines) {
    tags.add(line.account_tag);
    if (line.destination_account_tag) tags.add(line.destination_account_tag);
  }
  const [accountMap, index] = await Promise.all([loadAccounts(accounts, tags), deps.rating.index()]);
  // After the read, so that any other execution's debit comes after it and shows as a changed `rev`.
  const first = await claimBatch(ctx.mongo.db, batchId, job.import_id, job.batch);
  const plans = planBatch(job.lines, accountMap, index, batchId);

  // Steps 2 and 3: which planned records are this batch's own, and in what state.
  const callers = plans.flatMap((p) => (p.kind === 'planned' ? [p.caller] : []));
  const ownCallers = await writeOwn(deps, callers);
  const ownLines = new Set([...ownCallers.keys()].map((r) => r.lineIndex));
  const others = plans.flatMap((p, i) => (p.kind === 'planned' && ownLines.has(i) ? p.others : []));
  const ownOthers = await writeOwn(deps, others);
  const own = new Map([...ownCallers, ...ownOthers]);

  // Step 4: one debit per account that still owes the batch's total.
  const byAccount = new Map<string, PlannedRecord[]>();
  for (const record of own.keys()) {
    const list = byAccount.get(record.doc.account_tag);
    if (list) list.push(record);
    else byAccount.set(record.doc.account_tag, [record]);
  }
  const debits = new Map<string, bigint>();
  for (const [tag, records] of byAccount) {
    if (records.some((r) => own.get(r) !== 'pending')) continue;
    const total = records.reduce((sum, r) => sum + r.doc.fee, 0n);
    if (total !== 0n) debits.set(tag, total);
  }
  let initial: Map<string, DebitState>;
  if (first) {
    initial = new Map();
    for (const tag of debits.keys()) {
      const account = accountMap.get(tag);
      if (account) initial.set(tag, { rev: account.rev, marked: false });
    }
  } else {
    initial = await reloadDebitState(accounts, [...debits.keys()], batchId);
  }
  await applyDebits(accounts, debits, batchId, initial);

  // Step 5.
  await markCharged(transactions, [...own].filter(([, state]) => state === 'pending').map(([r]) => r.doc._id));

  const result = summarize(batchId, job, plans, own);
  if (job.keep_result) await storeBatchResult(ctx.mongo.db, batchId, jobTimestamp, result);
  else await releaseBatch(ctx.mongo.db, batchId);
  ctx.logger.debug({ batch: batchId, lines: result.lines, rated: result.rated }, 'import batch done');
  return result;
}

/**
 * Inserts records and returns those that are this batch's own, with their state: 'pending' when just
 * inserted, else the state found (an earlier attempt's record). Foreign duplicates are left out.
 */
async function writeOwn(deps: TransactionDeps, records: PlannedRecord[]): Promise<Map<PlannedRecord, string | undefined>> {
  const { transactions } = deps.ctx.mongo.collections;
  const duplicates = await insertRecords(transactions, records.map((r) => r.doc));
  const own = new Map<PlannedRecord, string | undefined>();
  const dupRecords = records.filter((_, i) => duplicates.has(i));
  const states = dupRecords.length > 0 ? await ownRecordStates(transactions, dupRecords.map((r) => r.doc._id)) : new Map();
  records.forEach((record, i) => {
    if (!duplicates.has(i)) own.set(record, 'pending');
    else if (states.has(record.doc._id)) own.set(record, states.get(record.doc._id));
  });
  return own;
}

function summarize(batchId: string, job: ImportBatchJob, plans: LinePlan[], own: Map<PlannedRecord, string | undefined>): ImportBatchResult {
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
      charged += plan.caller.doc.fee;
      for (const other of plan.others) if (own.has(other) && !other.inbound) chargedLinked += other.doc.fee;
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
