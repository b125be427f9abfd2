import type { CommandStartedEvent, Document } from 'mongodb';
import { connectMongo, Mongo } from '../../../src/shared/domain/store';
import { RatingDataCache } from '../../../src/shared/domain/rating-data/cache';
import { processImportBatch } from '../../../src/workers/imports/batch';
import { authorize } from '../../../src/workers/transactions/authorization';
import { begin } from '../../../src/workers/transactions/begin';
import type { TransactionDeps } from '../../../src/workers/transactions/deps';
import { end } from '../../../src/workers/transactions/end';
import { processEndedCall } from '../../../src/workers/transactions/processing';
import { record } from '../../../src/workers/transactions/record';
import { rollback } from '../../../src/workers/transactions/rollback';
import { createTestContext, TestContext } from '../../support/harness';
import { account, carrier, pricelist, rate, seed } from '../../support/seed';

/**
 * Shard keys (docs/SCALING.md): accounts, transactions and ledger are sharded on `account_tag`. Every
 * command the hot path and the money path send to them must carry an equality on `account_tag` (so
 * mongos sends it to one shard, or to the shards of an `$in` list) and an equality on every field of a
 * unique index (so that shard answers from an index, never a scan).
 *
 * The flows run in this process, exactly as a worker runs them (bench/agent-commands.ts does the
 * same), against a client that records every command: authorization, begin, end and processing of a
 * call with a linked parent and a concurrency limit (reservations), recordTransaction, rollback of a
 * running call and of a recorded one (refund), import batches (file and agent), and a batch run again
 * after a crash. Not run, hence exempt: the maintenance pass (src/workers/maintenance/*), the ledger
 * audit, the management API and an abandoned agent batch's undo; each reads across accounts on purpose
 * (docs/SCALING.md, "`_id`-keyed lookups"). The retried batch's read by `charge_op` is the one
 * exemption among the flows run (`exempt` below).
 */

/** The unique keys of the sharded collections (src/shared/infra/mongo.ts ensureIndexes, plus `_id`). */
const UNIQUE_KEYS: Record<string, string[][]> = {
  accounts: [['_id'], ['account_tag']],
  transactions: [['_id'], ['account_tag', 'transaction_tag', 'origin_account_tag']],
  ledger: [['_id']],
};

interface Seen {
  flow: string;
  command: string;
  collection: string;
  filter: Document | null;
  inserted?: Document[];
}

interface Violation extends Seen {
  problem: string;
}

/** An equality (a value, `$eq`, or `$in`: a few equalities, each routed to its shard) on `field`, at the top level or under `$and`. */
function equalityOn(filter: Document, field: string): boolean {
  if (Object.prototype.hasOwnProperty.call(filter, field)) {
    const v: unknown = filter[field];
    if (v === null || typeof v !== 'object' || Array.isArray(v) || v instanceof Date) return true;
    const ops = Object.keys(v as Document);
    if (ops.length > 0 && !ops[0].startsWith('$')) return true; // an embedded document, compared whole
    if ('$eq' in (v as Document)) return true;
    if (Array.isArray((v as Document).$in) && ((v as Document).$in as unknown[]).length > 0) return true;
  }
  return Array.isArray(filter.$and) && (filter.$and as Document[]).some((part) => equalityOn(part, field));
}

function problemOf(seen: Seen): string | null {
  if (seen.inserted) {
    const missing = seen.inserted.filter((doc) => doc.account_tag === undefined || doc.account_tag === null).length;
    return missing > 0 ? `${missing} inserted document(s) without account_tag (the shard key)` : null;
  }
  if (!seen.filter) return `${seen.command} without a filter: reads every shard`;
  if (!equalityOn(seen.filter, 'account_tag')) return 'no equality on account_tag (the shard key): sent to every shard';
  if (!UNIQUE_KEYS[seen.collection].some((key) => key.every((field) => equalityOn(seen.filter!, field)))) {
    return `no equality on a unique key (${UNIQUE_KEYS[seen.collection].map((k) => k.join('+')).join(' or ')}): may scan`;
  }
  return null;
}

/**
 * The one look-up across accounts on these flows: a retried batch reads every record it ever wrote by
 * `charge_op` (src/workers/imports/batch.ts storedRecordsOf), because the accounts its first run wrote
 * to are not all known any more (links may have changed). Rare (retries only), and indexed on every
 * shard (docs/SCALING.md).
 */
function exempt(seen: Seen): boolean {
  return (
    seen.flow === 'import-retry' &&
    seen.command === 'find' &&
    seen.collection === 'transactions' &&
    Object.keys(seen.filter ?? {}).join() === 'charge_op'
  );
}

/** The filters one command carries (several for a bulk update or delete). */
function filtersOf(e: CommandStartedEvent): Array<Omit<Seen, 'flow'>> {
  const c = e.command;
  const collection = String(c[e.commandName]);
  const at = (filter: unknown) => ({ command: e.commandName, collection, filter: (filter as Document | undefined) ?? null });
  switch (e.commandName) {
    case 'find':
    case 'count':
    case 'distinct':
      return [at(c.filter ?? c.query)];
    case 'findAndModify':
      return [at(c.query)];
    case 'update':
      return (c.updates as Document[]).map((u) => at(u.q));
    case 'delete':
      return (c.deletes as Document[]).map((d) => at(d.q));
    case 'aggregate': {
      const first = (c.pipeline as Document[])[0];
      return [at(first?.$match)];
    }
    case 'insert':
      return [{ command: 'insert', collection, filter: null, inserted: c.documents as Document[] }];
    default:
      return []; // getMore, killCursors, createIndexes, ...: not a document look-up
  }
}

describe('shard keys: the hot path and the money path name their account', () => {
  let ctx: TestContext;
  let watched: Mongo;
  let rating: RatingDataCache;
  let deps: TransactionDeps;
  let flow = 'setup';
  const seen: Seen[] = [];
  const writeConcerns = new Set<string>();

  beforeAll(async () => {
    ctx = await createTestContext();
    await seed(ctx, {
      carriers: [carrier('c1')],
      pricelists: [pricelist('pl')],
      rates: [rate('pl', 'c1', '39', { rate: 60, rate_increment: 1, connect_fee: 1 })],
      accounts: [
        account('parent', { balance: 1_000_000n }),
        account('caller', { balance: 1_000_000n, linked_accounts: ['parent'], max_concurrent_transactions: 10 }),
        account('receiver', { balance: 1_000_000n }),
        account('other', { balance: 1_000_000n, type: 'POSTPAID' }),
      ],
    });
    watched = await connectMongo(ctx.mongo.url, ctx.config.mongoDb, { monitorCommands: true });
    watched.client.on('commandStarted', (e: CommandStartedEvent) => {
      if (flow === 'setup') return;
      if (['insert', 'update', 'delete', 'findAndModify'].includes(e.commandName))
        writeConcerns.add(JSON.stringify(e.command.writeConcern ?? null));
      for (const f of filtersOf(e)) if (f.collection in UNIQUE_KEYS) seen.push({ flow, ...f });
    });
    rating = await RatingDataCache.start(ctx);
    deps = { ctx: { ...ctx, mongo: watched }, rating };
  });

  afterAll(async () => {
    await rating?.close();
    await watched?.close();
    await ctx?.destroy();
  });

  const deadline = () => Date.now() + 10_000;
  const ref = (id: string) => ({ id, deadline: deadline(), rerun: false });
  const start = (tag: string, accountTag = 'caller', destinationAccount: string | null = null) => ({
    transaction_tag: tag,
    account_tag: accountTag,
    source: '100',
    destination: '393299',
    source_ip: null,
    carrier_ip: null,
    tags: null,
    destination_account_tag: destinationAccount,
    timestamp_auth: null,
    timestamp_begin: new Date(Date.now() - 60_000).toISOString(),
  });

  it('sends every accounts, transactions and ledger command to one account, by a unique key', async () => {
    // 1. The lifecycle: authorization (reservation), begin (takes it over), end, processing per party.
    flow = 'lifecycle';
    const auth = await authorize(deps, {
      op: 'authorization',
      transaction_tag: 'call-1',
      account_tag: 'caller',
      destination_account_tag: 'receiver',
      source: '100',
      destination: '393299',
      deadline: deadline(),
    });
    expect(auth).toMatchObject({ authorized: true });
    expect(
      await begin(deps, { op: 'begin', ...start('call-1', 'caller', 'receiver'), deadline: deadline() }, ref('begin-1')),
    ).toMatchObject({ ok: true });
    expect(
      await end(
        deps,
        { op: 'end', transaction_tag: 'call-1', account_tag: 'caller', timestamp_end: new Date().toISOString(), deadline: deadline() },
        ref('end-1'),
      ),
    ).toMatchObject({ ok: true });
    for (const tag of ['caller', 'parent', 'receiver']) {
      const entry = (await ctx.mongo.collections.accounts.findOne({ account_tag: tag }))!.running_transactions[0];
      const processed = await processEndedCall(deps, {
        account_tag: tag,
        transaction_tag: 'call-1',
        entry_id: entry.id,
        enqueued_at: new Date().toISOString(),
      });
      expect(processed.outcome).toBe('charged');
    }

    // 2. recordTransaction.
    flow = 'record';
    expect(
      await record(
        deps,
        { op: 'record', ...start('rec-1'), timestamp_end: new Date().toISOString(), deadline: deadline() },
        ref('record-1'),
      ),
    ).toMatchObject({ ok: true });

    // 3. Rollback of a running call (entries removed) and of a recorded one (records refunded, deleted).
    flow = 'rollback';
    expect(await begin(deps, { op: 'begin', ...start('call-2'), deadline: deadline() }, ref('begin-2'))).toMatchObject({ ok: true });
    expect(
      await rollback(deps, { op: 'rollback', transaction_tag: 'call-2', account_tag: 'caller', deadline: deadline() }, ref('rollback-2')),
    ).toMatchObject({ ok: true });
    expect(
      await rollback(
        deps,
        { op: 'rollback', transaction_tag: 'rec-1', account_tag: 'caller', deadline: deadline() },
        ref('rollback-rec-1'),
      ),
    ).toMatchObject({ ok: true });
    expect(await ctx.mongo.collections.transactions.countDocuments({ transaction_tag: 'rec-1' })).toBe(0);

    // 4. Import batches: a file import's and an agent's (recordTransactions), first execution.
    flow = 'import';
    const lines = (prefix: string) =>
      ['caller', 'other', 'caller'].map((tag, i) => ({
        line: i + 1,
        ...start(`${prefix}-${i}`, tag),
        timestamp_end: new Date().toISOString(),
      }));
    // A batch id always holds the same lines (its claim keeps their hash): built once, sent again below.
    const impLines = lines('imp');
    const file = await processImportBatch(deps, { import_id: 'imp-1', batch: 0, lines: impLines, deadline: null }, Date.now());
    expect(file).toMatchObject({ rated: 3, refused: [] });
    const agent = await processImportBatch(
      deps,
      { import_id: 'agent-1', batch: 0, lines: lines('agent'), deadline: deadline() },
      Date.now(),
    );
    expect(agent).toMatchObject({ rated: 3, refused: [] });

    // 5. A batch that crashed after its debits (no result stored) is run again, after another batch
    //    debited the same accounts: its checks of records and ledger entries by id, and of the
    //    previous batch's entries before overwriting their markers.
    flow = 'setup';
    const balances = async () =>
      (await ctx.mongo.collections.accounts.find({}, { projection: { _id: 0, account_tag: 1, balance: 1 } }).toArray())
        .map((a) => `${a.account_tag}=${a.balance}`)
        .sort();
    await ctx.mongo.db
      .collection('import_batches')
      .updateOne({ _id: file.batch_id } as never, { $unset: { result: '', job_timestamp: '', finished_at: '', debits_settled: '' } });
    // The markers imp-2 overwrites (agent-1's) then look as if their entries might be missing: looked up first.
    await ctx.mongo.db.collection('import_batches').updateOne({ _id: agent.batch_id } as never, { $unset: { debits_settled: '' } });
    flow = 'import-retry';
    expect(
      await processImportBatch(deps, { import_id: 'imp-2', batch: 0, lines: lines('imp2'), deadline: null }, Date.now()),
    ).toMatchObject({ rated: 3 });
    flow = 'setup';
    const before = await balances();
    flow = 'import-retry';
    const again = await processImportBatch(deps, { import_id: 'imp-1', batch: 0, lines: impLines, deadline: null }, Date.now());
    expect(again).toEqual({ ...file, replayed: false });
    flow = 'setup';
    expect(await balances()).toEqual(before);

    const flows = new Set(seen.map((s) => s.flow));
    expect([...flows].sort()).toEqual(['import', 'import-retry', 'lifecycle', 'record', 'rollback']);
    const violations: Violation[] = seen.flatMap((s) => {
      const problem = problemOf(s);
      return problem && !exempt(s) ? [{ ...s, problem }] : [];
    });
    if (violations.length > 0) {
      const text = violations
        .map(
          (v) =>
            `  [${v.flow}] ${v.command} ${v.collection} ${v.filter ? JSON.stringify(v.filter, (_k, val: unknown) => (typeof val === 'bigint' ? `${val}n` : val)) : ''}\n      -> ${v.problem}`,
        )
        .join('\n');
      throw new Error(
        `${violations.length} of ${seen.length} commands on sharded collections would not be routed to one account's shard by a unique key:\n${text}`,
      );
    }
    expect(seen.length).toBeGreaterThan(20);
  });

  it('sends every write with the configured write concern (majority and journal by default)', () => {
    expect([...writeConcerns]).toEqual([JSON.stringify({ w: 'majority', j: true })]);
    expect(ctx.mongo.client.options.writeConcern).toMatchObject({ w: 'majority', journal: true });
  });

  it('takes MONGO_WRITE_CONCERN and MONGO_JOURNAL from the configuration', async () => {
    const other = await createTestContext({ MONGO_WRITE_CONCERN: '1', MONGO_JOURNAL: 'false' });
    try {
      expect(other.mongo.client.options.writeConcern).toMatchObject({ w: 1, journal: false });
    } finally {
      await other.destroy();
    }
  });
});
