import type { Collection, Db } from 'mongodb';
import { openMongo, type MongoConnection, type MongoPoolOptions } from '../infra/mongo';
import type { OutcomeDoc } from './calls/decisions';
import type { ImportBatchDoc } from './ledger/batches';
import type { ReratingDoc } from './rerating/model';
import type { DeckLeaseDoc } from './rate-decks/lease';
import type { LedgerEntryDoc } from './ledger/model';
import type { AccountDoc, CarrierDoc, HolidayDoc, PricelistDoc, PricelistRateDoc, RecordState, TransactionDoc } from './types';

/**
 * The domain's collections over a MongoDB connection (src/shared/infra/mongo.ts), their indexes and
 * the filters those indexes are partial on. The storage rules are docs/DESIGN.md section 2.
 */
export interface Collections {
  accounts: Collection<AccountDoc>;
  carriers: Collection<CarrierDoc>;
  pricelists: Collection<PricelistDoc>;
  rates: Collection<PricelistRateDoc>;
  transactions: Collection<TransactionDoc>;
  /** Every applied balance change, by permanent operation id (src/shared/domain/ledger). */
  ledger: Collection<LedgerEntryDoc>;
  /** Who decided each agent operation's fate, the worker ('done') or the agent ('abandoned'): src/shared/domain/calls/decisions.ts. */
  outcomes: Collection<OutcomeDoc>;
  /** Rerating runs: their selection, progress and totals (docs/RERATING.md). */
  reratings: Collection<ReratingDoc>;
  /** The holiday calendar that rate timings read (docs/RATING.md). */
  holidays: Collection<HolidayDoc>;
  /** Import batches and settlements: src/shared/domain/ledger/batches.ts, settlements.ts. */
  importBatches: Collection<ImportBatchDoc>;
  /** One rate deck run at a time per pricelist and carrier: src/shared/domain/rate-decks/lease.ts. */
  deckLeases: Collection<DeckLeaseDoc>;
}

/** A connection with the domain's collections: what every process holds (AppContext.mongo). */
export interface Mongo extends MongoConnection {
  collections: Collections;
}

export function collectionsOf(db: Db): Collections {
  return {
    accounts: db.collection<AccountDoc>('accounts'),
    carriers: db.collection<CarrierDoc>('carriers'),
    pricelists: db.collection<PricelistDoc>('pricelists'),
    rates: db.collection<PricelistRateDoc>('pricelist_rates'),
    transactions: db.collection<TransactionDoc>('transactions'),
    ledger: db.collection<LedgerEntryDoc>('ledger'),
    outcomes: db.collection<OutcomeDoc>('agent_outcomes'),
    importBatches: db.collection<ImportBatchDoc>('import_batches'),
    holidays: db.collection<HolidayDoc>('holidays'),
    reratings: db.collection<ReratingDoc>('reratings'),
    deckLeases: db.collection<DeckLeaseDoc>('rate_deck_leases'),
  };
}

/** One client and its pool (src/shared/infra/mongo.ts openMongo) with the domain's collections. */
export async function connectMongo(url: string, dbName: string, options: MongoPoolOptions = {}): Promise<Mongo> {
  const connection = await openMongo(url, dbName, options);
  return { ...connection, collections: collectionsOf(connection.db) };
}

/**
 * Rollbacks among the outcomes (two a call: begin's and end's decisions): the filter of their partial
 * indexes below. Every read of rollbacks names it, or MongoDB cannot use those indexes.
 */
export const ROLLBACK_OUTCOMES = { op: 'rollback' } as const;

/** Rollbacks answered ok whose refunds and removals are not all made yet (their worker slow or killed). */
export const UNDONE_ROLLBACKS = { ...ROLLBACK_OUTCOMES, state: 'done', applied_at: { $exists: false } } as const;

/**
 * Records in the states they leave within seconds unless their work was interrupted (the recovery
 * sweep's read): the filter of their partial index below, and the sweep's query itself.
 */
export const UNSETTLED_RECORDS: { state: { $in: readonly RecordState[] } } = { state: { $in: ['pending', 'rolling_back'] } };

/** The unique indexes are the storage rules of docs/DESIGN.md section 2: duplicates are refused by the store. */
export async function ensureIndexes(collections: Collections): Promise<void> {
  await dropRetiredIndexes(collections);
  await Promise.all([
    collections.accounts.createIndex({ account_tag: 1 }, { unique: true }),
    // The ledger's compare-and-swap (src/shared/domain/ledger/apply.ts) updates on (account_tag, ledger_rev).
    collections.accounts.createIndex({ account_tag: 1, ledger_rev: 1 }, { unique: true }),
    collections.carriers.createIndex({ carrier_tag: 1 }, { unique: true }),
    collections.pricelists.createIndex({ pricelist_tag: 1 }, { unique: true }),
    // A prefix holds one rate per timing (peak, off-peak: docs/RATING.md); rates without a timing have no
    // timing_key, which the index reads as null, so they stay one per (pricelist, carrier, prefix).
    collections.rates.createIndex({ pricelist_tag: 1, carrier_tag: 1, prefix: 1, timing_key: 1 }, { unique: true }),
    collections.holidays.createIndex({ date: 1 }, { unique: true }),
    // The records a rerating run selects: by the time their call started (docs/RERATING.md).
    collections.transactions.createIndex({ timestamp_begin: 1 }),
    // Runs the recovery sweep resumes (running, not moved for a while): few, by state.
    collections.reratings.createIndex({ state: 1, updated_at: 1 }),
    // A call is (caller, tag): a parent holds one record per child call, even when two children use one tag.
    collections.transactions.createIndex({ account_tag: 1, transaction_tag: 1, origin_account_tag: 1 }, { unique: true }),
    // A retried import batch reads every record it wrote (src/workers/imports/batch.ts).
    collections.transactions.createIndex({ charge_op: 1 }, { sparse: true }),
    // The console's dashboard (src/api/store/dashboard.ts) and the timestamp_end filters read records by
    // the time their call ended: the last hour and day are an index range, not the collection.
    collections.transactions.createIndex({ timestamp_end: 1 }),
    // The dashboard's accounts below their alert line: a range of balances below the highest line in
    // force, and that highest per-account threshold (one key from the top). The balance index costs
    // every balance change one index update (a key moved in a B-tree), beside the document's own write.
    collections.accounts.createIndex({ balance: 1 }),
    collections.accounts.createIndex({ balance_alert_threshold: 1 }),
    // Accounts with running entries (the dashboard's running calls): sparse, so it
    // holds only those accounts; one key per running entry, written by begin and removed by processing.
    collections.accounts.createIndex({ 'running_transactions.id': 1 }, { sparse: true }),
    // The audit and an account's history read the ledger by account.
    collections.ledger.createIndex({ account_tag: 1, at: 1 }),
    // Decisions by age: the recovery sweep deletes those past OUTCOME_RETENTION_SECONDS once it settled
    // what they decide (src/workers/maintenance/recover.ts). No TTL: a TTL index deletes on time whether
    // or not the sweep ran, and a call may outlive any fixed time (issue 31, defect 3).
    collections.outcomes.createIndex({ at: 1 }, { name: 'decisions_by_age' }),
    // Rollbacks of a call not yet carried out, looked up before a tag is refused as a duplicate. Partial:
    // it holds rollbacks only, so the two decisions of every call (begin, end) add no key to it.
    collections.outcomes.createIndex(
      { account_tag: 1, transaction_tag: 1 },
      { name: 'rollbacks_by_call', partialFilterExpression: ROLLBACK_OUTCOMES },
    ),
    // The recovery sweep's rollbacks decided but not carried out (once a minute): rollbacks only, not a
    // day of decisions.
    collections.outcomes.createIndex({ state: 1, at: 1 }, { name: 'rollbacks_by_state', partialFilterExpression: ROLLBACK_OUTCOMES }),
    // The recovery sweep's records left pending or rolling back (once a minute): a record holds a key
    // only while its charge or refund is under way (seconds), so the sweep reads those few rather than
    // every record ever made; imported and charged records, nearly all of them, hold none.
    collections.transactions.createIndex({ state: 1 }, { name: 'unsettled_records', partialFilterExpression: UNSETTLED_RECORDS }),
    // File batches waiting for a settlement, and settlements not finished (the recovery sweep's read):
    // sparse, so it holds only those, not every batch ever imported.
    collections.importBatches.createIndex({ settle_pending: 1 }, { sparse: true }),
  ]);
}

/**
 * Indexes of earlier versions: (account_tag, transaction_tag) on records would now refuse valid data
 * (a parent's records of two children's calls with one tag); (account_tag, rev) on accounts served
 * conditional debits, which now go by (account_tag, ledger_rev), and only cost every account write.
 */
async function dropRetiredIndexes(collections: Collections): Promise<void> {
  const retired: Array<[{ indexes(): Promise<Array<{ name?: string }>>; dropIndex(name: string): Promise<unknown> }, string]> = [
    [collections.transactions, 'account_tag_1_transaction_tag_1'],
    [collections.accounts, 'account_tag_1_rev_1'],
    [collections.outcomes, 'account_tag_1_transaction_tag_1'],
    // The TTL index of earlier versions (a day): it could delete the decision of a call still running.
    [collections.outcomes, 'at_1'],
    // One rate per (pricelist, carrier, prefix) before timings: now unique with timing_key.
    [collections.rates, 'pricelist_tag_1_carrier_tag_1_prefix_1'],
  ];
  for (const [collection, name] of retired) {
    const existing = await collection.indexes().catch(() => []);
    if (existing.some((index) => index.name === name)) await collection.dropIndex(name);
  }
}
