import type { CommandStartedEvent } from 'mongodb';
import type { AppContext } from '../../src/shared/domain/context';
import { connectMongo } from '../../src/shared/domain/store';
import { announceRatingDataChange, RatingDataCache } from '../../src/shared/domain/rating-data/cache';
import { authorize } from '../../src/workers/transactions/authorization';
import { begin } from '../../src/workers/transactions/begin';
import { endCall } from '../../src/workers/transactions/end';
import { chargeEnded } from '../../src/workers/transactions/processor';
import { DecisionMemory } from '../../src/workers/transactions/decision-memory';
import { SettledMarkers } from '../../src/shared/domain/ledger';
import { AuthorizationReads } from '../../src/workers/transactions/authorization-reads';
import { BegunEntries } from '../../src/workers/transactions/begun-entries';
import { account, carrier, pricelist, rate } from './seed';

export const CALL_PHASES = ['authorization', 'begin', 'end', 'processing'] as const;
export type CallPhase = (typeof CALL_PHASES)[number];

/** Per phase of one call, the MongoDB commands it sent: `<command> <collection>` -> count. */
export type CallCommands = Record<CallPhase, Map<string, number>>;

export const commandTotal = (byCommand: Map<string, number>) => [...byCommand.values()].reduce((a, b) => a + b, 0);

/**
 * The MongoDB commands one prepaid call costs, by phase (issue 12, issue 36): authorization, begin, end
 * and processing run in this process, exactly as a worker runs them (what the end leaves to do after
 * its answer, and the processing of the entries it ended), against a client of its own that counts every command it sends. The account's second call
 * is the one counted (see oneCall). Counts, not timings: each
 * command is a round trip, a socket write on both sides and a document copy in the MongoDB-wire server.
 * Seeds its own rate and accounts into `ctx`'s database (which it expects empty of them).
 */
export async function countCallCommands(
  ctx: AppContext,
  mongoUrl: string,
  /** `endElsewhere`: the end (and what follows it) runs in another worker process, which began nothing. */
  options: { parents: number; limited: boolean; endElsewhere?: boolean },
): Promise<CallCommands> {
  const counted = await connectMongo(mongoUrl, ctx.config.mongoDb, { monitorCommands: true });
  let phase: CallPhase | 'setup' = 'setup';
  const counts = Object.fromEntries(CALL_PHASES.map((p) => [p, new Map<string, number>()])) as CallCommands;
  counted.client.on('commandStarted', (e: CommandStartedEvent) => {
    if (phase === 'setup') return;
    const collection = e.command[e.commandName] as unknown;
    const key = `${e.commandName} ${typeof collection === 'string' ? collection : ''}`.trim();
    counts[phase].set(key, (counts[phase].get(key) ?? 0) + 1);
  });
  let rating: RatingDataCache | undefined;
  try {
    const c = ctx.mongo.collections;
    await c.carriers.insertOne(carrier('c1'));
    await c.pricelists.insertOne(pricelist('pl'));
    await c.rates.insertOne(rate('pl', 'c1', '39'));
    const parentTags = Array.from({ length: options.parents }, (_, i) => `parent${i}`);
    await c.accounts.insertMany([
      ...parentTags.map((tag) => account(tag, { balance: 1_000_000n })),
      account('caller', { balance: 1_000_000n, linked_accounts: parentTags, max_concurrent_transactions: options.limited ? 10 : null }),
    ]);
    await announceRatingDataChange(ctx);
    const cache = await RatingDataCache.start(ctx);
    rating = cache;
    // As a worker process holds them (src/workers/worker-pool.ts): with the decisions it recorded.
    const workerProcess = () => ({
      ctx: { ...ctx, mongo: counted },
      rating: cache,
      decisions: new DecisionMemory(),
      settledMarkers: new SettledMarkers(),
      authorizationReads: new AuthorizationReads(),
      begunEntries: new BegunEntries(),
      processInline: true,
    });
    const deps = workerProcess();
    // Another worker process of the same deployment: its memories are its own.
    const elsewhere = workerProcess();
    const ender = options.endElsewhere ? elsewhere : deps;
    const deadline = () => Date.now() + 5000;
    /**
     * One call, its phases counted when `counted`. Two calls run on the account and the second is
     * counted: a worker process leaves a charge's settled marker for the account's next begin or end
     * to remove inside its own write (src/shared/domain/ledger/settled-markers.ts), so the second call
     * is the steady state (it carries the first one's marker removal).
     */
    const oneCall = async (n: number, counted: boolean) => {
      const call = { transaction_tag: `call-${n}`, account_tag: 'caller' };
      const enter = (p: CallPhase) => {
        if (counted) phase = p;
      };
      enter('authorization');
      const authorized = await authorize(deps, {
        op: 'authorization',
        ...call,
        destination_account_tag: null,
        source: '100',
        destination: '393299',
        deadline: deadline(),
      });
      enter('begin');
      const started = await begin(
        deps,
        {
          op: 'begin',
          ...call,
          source: '100',
          destination: '393299',
          source_ip: null,
          carrier_ip: null,
          tags: null,
          destination_account_tag: null,
          timestamp_auth: null,
          timestamp_begin: new Date().toISOString(),
          deadline: deadline(),
        },
        { id: `job-begin-${n}`, deadline: deadline(), rerun: false },
      );
      enter('end');
      const ended = await endCall(
        ender,
        { op: 'end', ...call, timestamp_end: new Date(Date.now() + 30_000).toISOString(), deadline: deadline() },
        { id: `job-end-${n}`, deadline: deadline(), rerun: false },
      );
      phase = 'setup';
      if (!authorized.authorized || !started.ok || !ended.result.ok) {
        throw new Error(
          `call refused: authorization ${authorized.unauthorized_reason}, begin ${started.reason}, end ${ended.result.reason}`,
        );
      }
      // What follows the answer, as the worker's processor runs it (processor.ts): the end's own charge
      // finished, then each entry it ended charged in the same job.
      enter('processing');
      await ended.afterAnswer?.();
      const uncharged = await chargeEnded(ender, ended.toProcess);
      if (uncharged.length > 0) throw new Error(`processing left ${uncharged.map((j) => j.account_tag).join(', ')} uncharged`);
      phase = 'setup';
      // Charged: every party's record, with its charge in the ledger (the charged mark may still wait
      // for the next call's record write to travel with).
      const records = await c.transactions.find({ transaction_tag: call.transaction_tag }).toArray();
      const charges = await c.ledger.countDocuments({ _id: { $in: records.map((r) => `charge:${r._id}`) } });
      if (records.length !== 1 + parentTags.length || charges !== records.length) {
        throw new Error(`call ${n}: ${records.length} records, ${charges} charges`);
      }
    };
    await oneCall(1, false);
    await oneCall(2, true);
    return counts;
  } finally {
    phase = 'setup';
    await rating?.close();
    await counted.close();
  }
}
