import type { AppContext } from '../../shared/domain/context';
import { AccountDoc, callId, isReservation, RunningTransaction, type TransactionDoc } from '../../shared/domain/types';
import type { Collections } from '../../shared/domain/store';
import { jobId } from '../../shared/domain/queues/names';
import { notFenced, type RollbackTarget } from '../../shared/domain/calls/decisions';
import { beforeDeadline, done, type EndJob, type OperationResult, Reasons, refused } from '../../shared/domain/calls';
import { takeBackBegin } from './begin';
import { beginFate } from './fates';
import { conclude, decidedDone, fateOf, fencedAnswer, JobRef, timedOut } from './decide';
import { TransactionDeps } from './deps';
import type { EntryRecovery } from './recovery';
import { endedEntryOf } from './ended-entry';
import { begunEntryOf, endAndCharge, isSingleParty, type EndOutcome } from './end-charge';
import { reconcile } from './reconcile';
import type { EndedEntry, ProcessingJob } from '../../shared/domain/queues/payloads';
import type { SettledMarkers } from '../../shared/domain/ledger';

/**
 * Marks one account's entry of a call ended by this job, once: the filter requires it to be in progress,
 * and the job not fenced (abandoned by the agent, src/shared/domain/calls/decisions.ts). `decides`: the
 * write is the end's decision, made only on the entry of a single-party call (its begin decided by its
 * own write too), which then carries `end_decided`.
 */
async function endEntry(
  accounts: Collections['accounts'],
  accountTag: string,
  call: string,
  end: Date,
  ref: JobRef,
  decides = false,
  settledMarkers?: SettledMarkers,
): Promise<AccountDoc | null> {
  // reserved_until null: an authorization's reservation is no call to end.
  const entry = { call_id: call, in_progress: true, reserved_until: null, ...(decides ? { begin_decided: true } : {}) };
  // The account's charge markers this process settled go in the same write (settled-markers.ts).
  const pull = settledMarkers?.pullUpdate(accountTag);
  const updated = await accounts.findOneAndUpdate(
    { account_tag: accountTag, ...notFenced(ref.id), running_transactions: { $elemMatch: entry } },
    {
      $set: {
        'running_transactions.$[e].in_progress': false,
        'running_transactions.$[e].timestamp_end': end,
        'running_transactions.$[e].end_job': ref.id,
        'running_transactions.$[e].end_deadline': ref.deadline,
        ...(decides ? { 'running_transactions.$[e].end_decided': true } : {}),
      },
      $inc: { rev: 1 },
      ...pull?.update,
    },
    { returnDocument: 'after', arrayFilters: [{ 'e.call_id': call }], projection: callEntryOnly(call) },
  );
  if (updated) pull?.done();
  return updated;
}

/**
 * Of an account, only the call's entry (an account holds one per call): a busy account holds hundreds
 * of running calls, and returning them all costs both sides far more than the update (docs/BENCHMARKS.md).
 */
const callEntryOnly = (call: string) => ({ running_transactions: { $elemMatch: { call_id: call, reserved_until: null } } });

/** The call's entry among an account's (an authorization's reservation is no call). */
const entryOfCall = (doc: Pick<AccountDoc, 'running_transactions'> | null, call: string) =>
  doc?.running_transactions?.find((r) => r.call_id === call && !isReservation(r));

/**
 * The call's entry as the account holds it, for an end whose process did not begin the call (a
 * deployment with several worker processes, or a restart): what the end rates from never changes after
 * begin (begun-entries.ts), so the entry read stands in for the one the begin's process kept, and the
 * charging write is guarded by it all the same (end-charge.ts). One read, where ending the long way
 * costs four commands more (docs/BENCHMARKS.md, "MongoDB commands per call"). `multiParty`: the call has
 * several parties, so no single write decides its end. Nothing is read when this process does not charge
 * in the end's own write (no BegunEntries: processing runs elsewhere) or the agent no longer waits.
 */
async function readEntryToCharge(
  deps: TransactionDeps,
  job: EndJob,
  call: string,
  ref: JobRef,
): Promise<{ entry?: RunningTransaction; multiParty: boolean } | undefined> {
  if (!deps.begunEntries || !beforeDeadline(ref.deadline)) return undefined;
  const { accounts } = deps.ctx.mongo.collections;
  const entry = entryOfCall(await accounts.findOne({ account_tag: job.account_tag }, { projection: callEntryOnly(call) }), call);
  if (!entry) return { multiParty: false };
  if (!isSingleParty(entry)) return { multiParty: true };
  return { entry: entry.in_progress && entry.begin_decided ? entry : undefined, multiParty: false };
}

/**
 * Takes back an end that `endJob` made (it was abandoned): the entry is in progress again. `entry`
 * names it by its id, or by the call when the id is not known (another end's entries on other parties).
 */
export async function unEndEntry(
  accounts: Collections['accounts'],
  accountTag: string,
  endJob: string,
  entry: { id: string } | { call_id: string },
): Promise<void> {
  // An end decided by its own write is never taken back.
  const match =
    'id' in entry
      ? { id: entry.id, end_job: endJob, end_decided: { $ne: true } }
      : { call_id: entry.call_id, end_job: endJob, end_decided: { $ne: true } };
  await accounts.updateOne(
    { account_tag: accountTag, running_transactions: { $elemMatch: match } },
    {
      $set: {
        'running_transactions.$[e].in_progress': true,
        'running_transactions.$[e].timestamp_end': null,
        'running_transactions.$[e].end_job': null,
        'running_transactions.$[e].end_deadline': null,
      },
      $inc: { rev: 1 },
    },
    { arrayFilters: [Object.fromEntries(Object.entries(match).map(([k, v]) => [`e.${k}`, v]))] },
  );
}

/** Queues the rating of an ended entry; the job id is the entry's unique id, so a repeat is a no-op. */
export async function enqueueProcessing(ctx: AppContext, job: ProcessingJob): Promise<void> {
  await ctx.queues.processing.add('process', job, { jobId: processingJobId(job.entry_id) });
}

export const processingJobId = (entryId: string) => jobId('process', entryId);

/**
 * endTransaction, then each ended entry queued for processing (see endCall). For the worker's own
 * queue the processor runs endCall itself and charges the entries after answering (processor.ts).
 */
export async function end(deps: TransactionDeps, job: EndJob, ref: JobRef): Promise<OperationResult> {
  const { result, toProcess, afterAnswer } = await endCall(deps, job, ref);
  await afterAnswer?.();
  await queueProcessing(deps, toProcess);
  return result;
}

export type { EndOutcome };

/**
 * endTransaction: sets the end on every party's entry (balance unchanged, the entry still counts in
 * available-balance calculations), concludes the operation (decide.ts), and only then hands each entry
 * to processing (`toProcess`): an end abandoned by its deadline is taken back before anything is
 * charged. A re-run of the same job after a crash finds its own ends and carries on.
 */
export async function endCall(deps: TransactionDeps, job: EndJob, ref: JobRef): Promise<EndOutcome> {
  const { accounts } = deps.ctx.mongo.collections;
  const answer = (result: OperationResult): EndOutcome => ({ result, toProcess: [] });
  // A re-run of an end decided 'done': only the processing that follows the decision may be missing.
  const decided = await decidedDone(deps, ref);
  if (decided) {
    const held = await stillEnded(deps, ref, decided.made ?? []);
    return { result: decided.result ?? done(), toProcess: held.map((e) => processingJob(e.account_tag, job.transaction_tag, e.entry_id!)) };
  }
  const call = callId(job.account_tag, job.transaction_tag);
  // A single-party call is ended, decided and charged by one write (end-charge.ts): from the entry this
  // process kept when it began the call, or else (another worker process began it, or this one
  // restarted) from the entry read from the account.
  const kept = begunEntryOf(deps, job);
  const read = kept ? undefined : await readEntryToCharge(deps, job, call, ref);
  const toCharge = kept ?? read?.entry;
  const charged = toCharge ? await endAndCharge(deps, job, ref, toCharge) : null;
  if (charged) return charged;
  const at = new Date(job.timestamp_end);
  // A single-party call is ended and decided by one write, while the agent still waits (issue 36); a call
  // the read showed with several parties is not, so that write would miss.
  const decidedEnd =
    beforeDeadline(ref.deadline) && !read?.multiParty
      ? entryOfCall(await endEntry(accounts, job.account_tag, call, at, ref, true, deps.settledMarkers), call)
      : undefined;
  if (decidedEnd) {
    deps.decisions?.remember(ref.id, { state: 'done', made: [{ account_tag: job.account_tag, entry_id: decidedEnd.id }], result: done() });
    return { result: done(), toProcess: [processingJob(job.account_tag, job.transaction_tag, decidedEnd.id, endedEntryOf(decidedEnd))] };
  }
  const entryOf = (doc: Pick<AccountDoc, 'running_transactions'> | null) => entryOfCall(doc, call);
  const endedByUs = async (tag: string) => {
    const entry = entryOf(await accounts.findOne({ account_tag: tag }, { projection: callEntryOnly(call) }));
    return entry && entry.end_job === ref.id ? entry : undefined;
  };
  /**
   * Ends the call's entry on one account for this job. Another end of the call may hold it (a client's
   * retry while the first attempt is in flight, or that attempt still running past its deadline and
   * reaching a linked account after this one took the caller back): it stands only if decided 'done';
   * abandoned, `takeBack` undoes it and this end makes it. Skipped, a linked account's entry would go
   * back in progress when that end undoes itself: the caller charged, the parent never.
   */
  const endOn = async (
    tag: string,
    takeBack: (other: RunningTransaction) => Promise<unknown>,
  ): Promise<RunningTransaction | 'absent' | 'ended' | 'unknown' | 'fenced'> => {
    for (let attempt = 0; ; attempt++) {
      const mine = entryOf(await endEntry(accounts, tag, call, at, ref)) ?? (await endedByUs(tag));
      if (mine) return mine;
      const read = await accounts.findOne(
        { account_tag: tag },
        { projection: { ...callEntryOnly(call), fenced_jobs: { $elemMatch: { job: ref.id } } } },
      );
      const current = entryOf(read);
      if (!current) return 'absent';
      // Taken back in between (the end that stood in the way was abandoned): end it now; unless this end
      // is the one abandoned (fenced): it may not end anything now.
      if (current.in_progress) {
        if ((read?.fenced_jobs?.length ?? 0) > 0) return 'fenced';
        if (attempt >= 3) return 'unknown';
        continue;
      }
      if (!current.end_job || current.end_decided) return 'ended';
      const fate = await fateOf(
        deps,
        {
          jobId: current.end_job,
          deadline: current.end_deadline ?? undefined,
          op: 'end',
          account_tag: job.account_tag,
          transaction_tag: job.transaction_tag,
          share: { account_tag: tag, entry_id: current.id },
        },
        ref.deadline,
      );
      if (fate === 'unknown' || (fate === 'abandoned' && attempt >= 3)) return 'unknown';
      if (fate === 'done') return 'ended';
      await takeBack(current);
    }
  };
  // The caller first: another end standing there is taken back on every party of the call.
  const own = await endOn(job.account_tag, (other) =>
    Promise.all((other.call_parties ?? [job.account_tag]).map((tag) => unEndEntry(accounts, tag, other.end_job!, { call_id: call }))),
  );
  if (own === 'absent') {
    // Ended and charged already (processing follows an end within milliseconds): a call whose record
    // stands has ended, so an end sent again answers ALREADY_ENDED, as docs/AGENT.md promises; unless
    // this very job charged it (its first run ended and charged the call in one write, end-charge.ts,
    // and stopped before answering): that end is done.
    const recorded = await standingRecord(deps, job);
    if (recorded?.end_job === ref.id) return answer(done());
    return answer(refused(recorded ? Reasons.ALREADY_ENDED : Reasons.NOT_FOUND));
  }
  if (own === 'ended') return answer(refused(Reasons.ALREADY_ENDED));
  // Fenced: this job can end nothing; its answer is the decision in force.
  if (own === 'fenced') {
    return answer(
      await fencedAnswer(deps, { jobId: ref.id, op: 'end', account_tag: job.account_tag, transaction_tag: job.transaction_tag }),
    );
  }
  if (own === 'unknown') return answer(timedOut);
  // The entry is a call only if its begin stands (issue 31, defect 4): the leftovers of a begin that
  // failed between parties, or was abandoned, would charge some parties and not others.
  const begun = await beginFate(deps, own, job.account_tag, ref.deadline);
  if (begun !== 'done') {
    if (begun === 'unknown') {
      await unEndEntry(accounts, job.account_tag, ref.id, { id: own.id });
      return answer(timedOut);
    }
    await takeBackBegin(deps, job.account_tag, job.transaction_tag, own.begin_job!, { state: 'abandoned' });
    deps.ctx.logger.warn(
      { jobId: ref.id, transaction_tag: job.transaction_tag, begin_job: own.begin_job },
      'end of a call whose begin was abandoned: its entries removed, NOT_FOUND',
    );
    return answer(refused(Reasons.NOT_FOUND));
  }
  const parties = [job.account_tag, ...(own.call_parties ?? []).filter((tag) => tag !== job.account_tag)];
  const others = await Promise.all(
    parties
      .slice(1)
      .map(async (tag) => ({ tag, entry: await endOn(tag, (other) => unEndEntry(accounts, tag, other.end_job!, { id: other.id })) })),
  );
  // Undecided: the agent answers TIMEOUT and records this end abandoned; the recovery sweep takes its ends back.
  if (others.some((o) => o.entry === 'unknown' || o.entry === 'fenced')) return answer(timedOut);
  const ended = [
    { tag: job.account_tag, entry: own },
    ...others.map(({ tag, entry }) => ({ tag, entry: typeof entry === 'string' ? undefined : entry })),
  ];
  const made = ended.flatMap(({ tag, entry }) => (entry ? [{ account_tag: tag, entry_id: entry.id }] : []));
  const opRef = { jobId: ref.id, op: 'end', account_tag: job.account_tag, transaction_tag: job.transaction_tag, made };
  const result = await conclude(deps, opRef, ref.deadline, done(), async (undo) => {
    await Promise.all(undo.map((e) => unEndEntry(accounts, e.account_tag, ref.id, { id: e.entry_id! })));
  });
  if (!result.ok) return answer(result);
  const toProcess = ended.flatMap(({ tag, entry }) =>
    entry ? [processingJob(tag, job.transaction_tag, entry.id, endedEntryOf(entry))] : [],
  );
  return { result, toProcess };
}

/**
 * The call's record on its caller, if it stands: a 'pending' one of processing whose entry is gone
 * is settled from the ledger first (charged: it stands; not: it goes, reconcile.ts).
 */
async function standingRecord(deps: TransactionDeps, job: EndJob): Promise<Pick<TransactionDoc, '_id' | 'end_job'> | null> {
  const recorded = await deps.ctx.mongo.collections.transactions.findOne(
    { account_tag: job.account_tag, transaction_tag: job.transaction_tag, origin_account_tag: job.account_tag },
    { projection: { _id: 1, end_job: 1, state: 1, charged_by: 1 } },
  );
  if (recorded?.state !== 'pending' || recorded.charged_by !== 'processing') return recorded;
  const outcome = await reconcile(deps, job.account_tag, recorded._id);
  return outcome === 'rolled-back' || outcome === 'gone' ? null : recorded;
}

/** Of the entries an end made, those it still holds ended (not processed or rolled back since). */
async function stillEnded(deps: TransactionDeps, ref: JobRef, made: RollbackTarget[]): Promise<RollbackTarget[]> {
  const { accounts } = deps.ctx.mongo.collections;
  const held = await Promise.all(
    made.map((e) =>
      accounts.findOne(
        { account_tag: e.account_tag, running_transactions: { $elemMatch: { id: e.entry_id, end_job: ref.id } } },
        { projection: { _id: 1 } },
      ),
    ),
  );
  return made.filter((_, i) => held[i] !== null);
}

/** The processing job of one ended entry; `ended`: the entry as its end left it (charged without a read). */
export function processingJob(accountTag: string, transactionTag: string, entryId: string, ended?: EndedEntry): ProcessingJob {
  return { account_tag: accountTag, transaction_tag: transactionTag, entry_id: entryId, enqueued_at: new Date().toISOString(), ended };
}

/** Decided: a queue that fails now delays the charge (requeue-ended queues it again), it does not undo the end. */
export async function queueProcessing(deps: TransactionDeps, jobs: ProcessingJob[]): Promise<void> {
  await Promise.all(jobs.map((j) => enqueueProcessing(deps.ctx, j))).catch((err: unknown) =>
    deps.ctx.logger.warn(
      { err, transaction_tags: [...new Set(jobs.map((j) => j.transaction_tag))] },
      'processing not queued; the maintenance pass will queue it',
    ),
  );
}

/**
 * Takes back the ends the end job `jobId` of the call (caller, tag) made, on every party of the call
 * (its entries go back in progress). For an end abandoned after it failed midway. Safe to repeat.
 */
export async function takeBackEnd(deps: TransactionDeps, callerTag: string, transactionTag: string, jobId: string): Promise<void> {
  const { accounts } = deps.ctx.mongo.collections;
  const call = callId(callerTag, transactionTag);
  const caller = entryOfCall(await accounts.findOne({ account_tag: callerTag }, { projection: callEntryOnly(call) }), call);
  const parties = caller?.call_parties ?? [callerTag];
  await Promise.all(parties.map((tag) => unEndEntry(accounts, tag, jobId, { call_id: call })));
}

/** The recovery sweep's part for end: an entry ended by an end never decided 'done' goes back in progress. */
export const endRecovery: EntryRecovery = {
  op: 'end',
  field: 'end_job',
  pending: (entry) =>
    !entry.in_progress && entry.end_job && !entry.end_decided && entry.end_deadline != null
      ? { jobId: entry.end_job, deadline: entry.end_deadline }
      : null,
  undo: async (deps, accountTag, entry, jobId) => {
    await unEndEntry(deps.ctx.mongo.collections.accounts, accountTag, jobId, { id: entry.id });
    return true;
  },
};
