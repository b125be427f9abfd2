import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { AccountDoc, TransactionDoc } from '../types';
import type { Collections } from '../store';
import type { RatingIndex } from '../rating';
import { jobId } from '../queues/names';
import type { ImportJob } from '../queues/payloads';
import { rateAgain } from './rate';
import type { RerateSelection, ReratingDoc } from './model';
import { selectionFilter } from './selection';

export type { ReratingCounts, ReratingDoc, ReratingState } from './model';

/**
 * Rerating runs (docs/RERATING.md): a selection of records rated again and corrected through the ledger,
 * as queued work in the workers, in batches of the records after a cursor (`after`, by `_id`). The run's
 * document is the truth: a batch job is named by (run, batch number), and a batch counts only if the
 * run is still at that number when it finishes (the cursor moves once per batch); a lost job is queued
 * again by the recovery sweep from the document alone.
 */

/** Records per batch: one read, their accounts in one read, then one correction per changed record. */
export const RERATE_BATCH_SIZE = 500;

export const rerateJobName = 'rerate-batch';

export const rerateJobId = (run: string, batch: number) => jobId('rerate', run, String(batch));

/** Queues a run's batch; its id makes a second add of the same batch a no-op. */
export async function enqueueRerateBatch(imports: Queue<ImportJob>, run: string, batch: number): Promise<void> {
  await imports.add(rerateJobName, { rerating_id: run, batch }, { jobId: rerateJobId(run, batch) });
}

/** Creates a run over `selection` and queues its first batch. */
export async function startRerating(
  collections: Pick<Collections, 'reratings' | 'transactions'>,
  imports: Queue<ImportJob>,
  selection: RerateSelection,
  options: { now?: Date; batchSize?: number } = {},
): Promise<ReratingDoc> {
  const now = options.now ?? new Date();
  const run: ReratingDoc = {
    _id: randomUUID(),
    selection,
    state: 'running',
    batch: 0,
    batch_size: options.batchSize ?? RERATE_BATCH_SIZE,
    // What its batches will read: the records still 'pending' too (batch.ts settles them first), so that
    // a progress of seen / total ends at 1.
    total: await collections.transactions.countDocuments(selectionFilter(selection, null, { pending: true })),
    after: null,
    counts: { seen: 0, changed: 0, unchanged: 0, skipped: 0 },
    difference: 0n,
    created_at: now,
    updated_at: now,
    finished_at: null,
  };
  await collections.reratings.insertOne(run);
  await enqueueRerateBatch(imports, run._id, 0);
  return run;
}

export interface PreviewChange {
  id: string;
  account_tag: string;
  transaction_tag: string;
  timestamp_begin: Date | null;
  fee_before: bigint;
  fee_after: bigint;
}

/** What a run over a selection would do, computed without changing anything (the dry run). */
export interface ReratingPreview {
  records: number;
  changed: number;
  unchanged: number;
  /** Records that could not be rated again (left as they are). */
  unrated: number;
  /** Sum of (new fee - old fee) over the changed records. */
  difference: bigint;
  /** Per account with a change: its changed records and their total difference, the largest first. */
  accounts: Array<{ account_tag: string; records: number; difference: bigint }>;
  /** The changes with the largest difference (either way), the largest first. */
  sample: PreviewChange[];
}

const abs = (n: bigint) => (n < 0n ? -n : n);

/** The dry run: every selected record rated again with `index`, nothing written. */
export async function previewRerating(
  collections: Pick<Collections, 'transactions' | 'accounts'>,
  index: RatingIndex,
  selection: RerateSelection,
  sampleSize = 10,
  /** The API's bound on the scan (MONGO_MAX_TIME_MS); the CLI's dry run has none. */
  maxTimeMS?: number,
): Promise<ReratingPreview> {
  const preview: ReratingPreview = { records: 0, changed: 0, unchanged: 0, unrated: 0, difference: 0n, accounts: [], sample: [] };
  const perAccount = new Map<string, { records: number; difference: bigint }>();
  const accounts = new Map<string, AccountDoc | null>();
  let batch: TransactionDoc[] = [];
  const flush = async () => {
    const missing = [...new Set(batch.map((r) => r.account_tag))].filter((tag) => !accounts.has(tag));
    if (missing.length > 0) {
      const found = await collections.accounts
        .find({ account_tag: { $in: missing } }, { projection: { running_transactions: 0 } })
        .toArray();
      for (const tag of missing) accounts.set(tag, found.find((a) => a.account_tag === tag) ?? null);
    }
    for (const record of batch) {
      preview.records += 1;
      const account = accounts.get(record.account_tag);
      const rated = account ? rateAgain(index, account, record) : null;
      if (!rated) preview.unrated += 1;
      else if (rated.fee === record.fee) preview.unchanged += 1;
      else {
        const difference = rated.fee - record.fee;
        preview.changed += 1;
        preview.difference += difference;
        const acc = perAccount.get(record.account_tag) ?? { records: 0, difference: 0n };
        acc.records += 1;
        acc.difference += difference;
        perAccount.set(record.account_tag, acc);
        preview.sample.push({
          id: record._id,
          account_tag: record.account_tag,
          transaction_tag: record.transaction_tag,
          timestamp_begin: record.timestamp_begin,
          fee_before: record.fee,
          fee_after: rated.fee,
        });
        if (preview.sample.length > sampleSize * 4) trimSample(preview, sampleSize);
      }
    }
    batch = [];
  };
  for await (const record of collections.transactions.find(selectionFilter(selection), {
    projection: { reratings: 0 },
    ...(maxTimeMS === undefined ? {} : { maxTimeMS }),
  })) {
    batch.push(record);
    if (batch.length >= RERATE_BATCH_SIZE) await flush();
  }
  await flush();
  trimSample(preview, sampleSize);
  preview.accounts = [...perAccount.entries()]
    .map(([account_tag, a]) => ({ account_tag, ...a }))
    .sort((a, b) => (abs(b.difference) > abs(a.difference) ? 1 : abs(b.difference) < abs(a.difference) ? -1 : 0));
  return preview;
}

function trimSample(preview: ReratingPreview, size: number): void {
  const size_ = (c: PreviewChange) => abs(c.fee_after - c.fee_before);
  preview.sample.sort((a, b) => (size_(b) > size_(a) ? 1 : size_(b) < size_(a) ? -1 : 0));
  preview.sample.length = Math.min(preview.sample.length, size);
}
