import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Queue, QueueEvents } from 'bullmq';
import type { AnyBulkWriteOperation, Db, Filter } from 'mongodb';
import { openImport, type ImportDoc } from '../ledger';
import type { ImportBatchResult, ImportJob } from '../queues/payloads';
import { feedRecords } from './feed';
import type { Format } from './records';
import { BatchFailed, BatchSubmitter } from './submit';
import { Totals } from './summary';

/**
 * Imports uploaded through the management API (`POST /v1/imports`), tracked in MongoDB so that any API
 * process can show them: the import's document in `imports` (the one the CLI opens, src/shared/domain/ledger)
 * gets the upload's name and progress, and its rejected lines go to `import_rejects`.
 *
 * One process runs an import at a time: it claims the document (`state: running` with a `runner` token
 * of its own) and keeps a heartbeat on it; every progress write is conditional on its token. A running
 * import whose heartbeat is older than STALE_MS has lost its process (killed, crashed): uploading the
 * same file again takes it over and resumes it, as a rerun of the CLI does (finished batches replayed,
 * nothing charged twice).
 */

export type UploadState = 'running' | 'done' | 'failed';

export interface UploadDoc extends ImportDoc {
  /** The file's name as the uploader gave it (`name=`), or null. */
  name?: string | null;
  format?: Format;
  state?: UploadState;
  /** Lines read so far (the total once done). */
  lines?: number;
  /** Lines whose outcome is known (rejected, rated or duplicate). */
  done?: number;
  accepted?: number;
  /** Lines recorded: rated now or by an earlier run (recorded + rejected = done). */
  recorded?: number;
  rejected?: number;
  started_at?: Date;
  finished_at?: Date | null;
  error?: string | null;
  /** The process running it (a token per run) and when it last wrote. */
  runner?: string | null;
  heartbeat_at?: Date;
}

export interface ImportRejectDoc {
  /** `<import id>/<line, 10 digits>`: a rerun stores a line's reject once, and `_id` order is line order. */
  _id: string;
  import_id: string;
  line: number;
  reason: string;
  account_tag?: string;
}

/** Rejected lines kept per import (the import's `rejected` counts them all). */
export const REJECTS_KEPT = 10_000;
/** How often a running import writes its progress (and heartbeat). */
export const PROGRESS_MS = 1000;
/** A running import without a heartbeat for this long has lost its process: an upload of the same file takes it over. */
export const STALE_MS = 30_000;
/** Batch size of an upload's first run (a later run keeps the import's, even one the CLI started). */
export const UPLOAD_BATCH_SIZE = 1000;
/** Batches queued or running at once per upload, as the CLI's default. */
export const UPLOAD_MAX_IN_FLIGHT = 8;

export const uploadsOf = (db: Db) => db.collection<UploadDoc>('imports');
export const importRejectsOf = (db: Db) => db.collection<ImportRejectDoc>('import_rejects');

export function rejectId(importId: string, line: number): string {
  return `${importId}/${String(line).padStart(10, '0')}`;
}

/** The rejects of one import: an `_id` range (`/` sorts just before `0`), so any server serves it from the `_id` index. */
export function rejectsOfImport(importId: string): Filter<ImportRejectDoc> {
  return { _id: { $gt: `${importId}/`, $lt: `${importId}0` } };
}

/** Only imports that were uploaded have a state (the CLI keeps no progress in MongoDB). */
export const UPLOADED: Filter<UploadDoc> = { state: { $exists: true } };

export interface Claim {
  /** True when this process now runs the import; false when a live process is running it already. */
  owned: boolean;
  runner: string;
  batchSize: number;
}

/**
 * Registers an upload: creates the import's document (or finds it: same content, same import) and
 * claims it unless a live process is running it. A claim restarts the counts: the run reads the whole
 * file again, batches an earlier run finished answer as replayed.
 */
export async function claimUpload(
  db: Db,
  upload: { importId: string; name: string | null; format: Format },
  now = new Date(),
): Promise<Claim> {
  const record = await openImport(db, { _id: upload.importId, batch_size: UPLOAD_BATCH_SIZE, source: upload.name ?? 'upload' });
  const runner = randomUUID();
  const claimed = await uploadsOf(db).findOneAndUpdate(
    { _id: upload.importId, $or: [{ state: { $ne: 'running' } }, { heartbeat_at: { $lt: new Date(now.getTime() - STALE_MS) } }] },
    {
      $set: {
        name: upload.name,
        format: upload.format,
        state: 'running',
        runner,
        heartbeat_at: now,
        started_at: now,
        finished_at: null,
        error: null,
        lines: 0,
        done: 0,
        accepted: 0,
        recorded: 0,
        rejected: 0,
      },
    },
    { returnDocument: 'after' },
  );
  return { owned: claimed !== null, runner, batchSize: record.batch_size };
}

export interface UploadRunOptions {
  db: Db;
  queue: Queue<ImportJob>;
  events: QueueEvents;
  importId: string;
  format: Format;
  /** The spooled body; the caller removes it once the run ends. */
  file: string;
  claim: Claim;
  maxInFlight?: number;
  progressMs?: number;
}

/** The run lost its claim (another process took the import over): it stops without writing. */
class ClaimLost extends Error {}

/**
 * One run of an uploaded import, from its spooled file: the CLI's path (feedRecords, BatchSubmitter,
 * workers rating the batches) with progress and rejects written to MongoDB instead of a terminal and a
 * reject file. `finished` settles when the run ends (state done or failed written, unless the claim was
 * lost); it never rejects.
 */
export class UploadRun {
  readonly finished: Promise<void>;
  private readonly totals = new Totals();
  private readonly submitter: BatchSubmitter;
  private readonly pendingRejects: ImportRejectDoc[] = [];
  private storedRejects = 0;
  /** Rejects taken from `pendingRejects` by a write not finished yet: counted, or the cap overshoots meanwhile. */
  private writingRejects = 0;
  private stopReason: string | null = null;
  private lost = false;
  private writing: Promise<void> = Promise.resolve();
  private ticking = false;

  constructor(private readonly options: UploadRunOptions) {
    this.submitter = new BatchSubmitter(
      options.queue,
      options.events,
      options.db,
      options.maxInFlight ?? UPLOAD_MAX_IN_FLIGHT,
      async (result) => this.onResult(result),
    );
    this.finished = this.run();
  }

  /** Stops the run (the API is closing): it ends `failed` with this reason; uploading the file again resumes it. */
  stop(reason: string): Promise<void> {
    this.stopReason ??= reason;
    this.submitter.close();
    return this.finished;
  }

  private get importId(): string {
    return this.options.importId;
  }

  private async run(): Promise<void> {
    const { db, file, format, claim } = this.options;
    const timer = setInterval(() => this.tick(), this.options.progressMs ?? PROGRESS_MS);
    timer.unref();
    try {
      this.storedRejects = await importRejectsOf(db).countDocuments(rejectsOfImport(this.importId));
      const input = createReadStream(file);
      try {
        await feedRecords(input, {
          importId: this.importId,
          format,
          batchSize: claim.batchSize,
          submitter: this.submitter,
          totals: this.totals,
          onInvalid: async (line, reason) => {
            // A long run of invalid lines sends no batch: stop here rather than at the next one.
            if (this.stopReason !== null || this.lost) throw new BatchFailed('import stopped');
            this.reject(line, reason);
          },
        });
      } finally {
        input.destroy();
      }
      await this.submitter.drain();
      clearInterval(timer);
      await this.progress({ state: 'done', finished_at: new Date() });
    } catch (err) {
      clearInterval(timer);
      if (this.lost || err instanceof ClaimLost) return;
      const message = this.stopReason ?? (err as Error).message ?? String(err);
      await this.progress({ state: 'failed', finished_at: new Date(), error: message }).catch(() => undefined);
    } finally {
      clearInterval(timer);
      this.submitter.close();
    }
  }

  /** The periodic write (skipped while the previous one is still going): progress and heartbeat. */
  private tick(): void {
    if (this.ticking) return;
    this.ticking = true;
    this.progress()
      .catch(() => undefined) // a transient error: the next tick writes again; a lost claim stops the run
      .finally(() => (this.ticking = false));
  }

  private async onResult(result: ImportBatchResult): Promise<void> {
    this.totals.add(result);
    for (const r of result.refused) this.reject(r.line, r.reason, r.account_tag);
  }

  private reject(line: number, reason: string, account_tag?: string): void {
    if (this.storedRejects + this.writingRejects + this.pendingRejects.length >= REJECTS_KEPT) return;
    this.pendingRejects.push({
      _id: rejectId(this.importId, line),
      import_id: this.importId,
      line,
      reason,
      ...(account_tag ? { account_tag } : {}),
    });
  }

  /** Writes the rejects gathered and the counts (one write at a time); `last` ends the run. */
  private progress(last?: Partial<UploadDoc>): Promise<void> {
    const write = this.writing.then(() => this.write(last));
    this.writing = write.catch(() => undefined);
    return write;
  }

  private async write(last?: Partial<UploadDoc>): Promise<void> {
    if (this.lost) throw new ClaimLost('claim lost');
    const { db, claim } = this.options;
    if (this.pendingRejects.length > 0) {
      const batch = this.pendingRejects.splice(0);
      this.writingRejects = batch.length;
      // A rerun stores the same lines again: an upsert that only inserts keeps the first reason and counts new ones.
      const ops: AnyBulkWriteOperation<ImportRejectDoc>[] = batch.map(({ _id, ...doc }) => ({
        updateOne: { filter: { _id }, update: { $setOnInsert: doc }, upsert: true },
      }));
      try {
        const result = await importRejectsOf(db).bulkWrite(ops, { ordered: false });
        this.storedRejects += result.upsertedCount;
      } catch (err) {
        // Those written before the failure are counted now: written again, they count nothing.
        this.storedRejects += (err as { result?: { upsertedCount?: number } }).result?.upsertedCount ?? 0;
        this.pendingRejects.unshift(...batch); // written again by the next tick
        throw err;
      } finally {
        this.writingRejects = 0;
      }
    }
    const t = this.totals;
    const updated = await uploadsOf(db).updateOne(
      { _id: this.importId, runner: claim.runner, state: 'running' },
      {
        $set: {
          lines: t.lines,
          done: t.done,
          accepted: t.accepted,
          recorded: t.rated + t.duplicates,
          rejected: t.rejected,
          heartbeat_at: new Date(),
          ...last,
        },
      },
    );
    if (updated.matchedCount === 0) {
      this.lost = true;
      this.submitter.close();
      throw new ClaimLost(`import ${this.importId}: another process took it over`);
    }
  }
}
