/**
 * Documents as stored in MongoDB. Ids are UUID strings kept in `_id` and exposed as `id`.
 * Money (balance, fees) is an integer number of minor currency units held as 64-bit integers:
 * `bigint` in memory, BSON int64 on disk (the driver runs with `useBigInt64`).
 */
import type { LedgerMarker } from './ledger/model';

export type AccountType = 'PREPAID' | 'POSTPAID';
export type CarrierProtocol = 'TCP' | 'UDP';
export type PricelistCurrency = 'USD' | 'EUR';

export interface CarrierDoc {
  _id: string;
  carrier_tag: string;
  host: string;
  port: number;
  protocol: CarrierProtocol;
  active: boolean;
}

export interface PricelistDoc {
  _id: string;
  pricelist_tag: string;
  name: string | null;
  currency: PricelistCurrency;
  /** The clock its rates' timings are read on: an IANA time zone name; absent or null: UTC (docs/RATING.md). */
  time_zone?: string | null;
}

/**
 * When a rate version applies, on its pricelist's clock (docs/RATING.md, "Rates by time of day";
 * the rules are in src/shared/domain/rating/timing.ts).
 */
export interface RateTiming {
  /** ISO weekdays, 1 Monday to 7 Sunday; null: every day. */
  days: number[] | null;
  /** Local time of day `HH:MM:SS`, start inclusive, end exclusive; both null: the whole day. */
  start: string | null;
  end: string | null;
  /** 'only': on holiday dates only; 'exclude': never on them; null: whatever the day. */
  holidays: 'only' | 'exclude' | null;
}

/** A holiday date of the calendar that rate timings read (collection `holidays`). */
export interface HolidayDoc {
  _id: string;
  /** A local date `YYYY-MM-DD`, read on each pricelist's own clock. */
  date: string;
  name: string | null;
}

/** The rating terms of a rate; everything the fee formula needs. */
export interface RateTerms {
  connect_fee: number;
  /** Per minute, in minor units. */
  rate: number;
  /** Billing step in seconds; 0 means 1. */
  rate_increment: number;
  /** Second of the call from which `rate` applies; the seconds before it cost only the connect fee. */
  interval_start: number;
}

/**
 * One version of a rate: its terms and validity window (start inclusive, end exclusive; null: open).
 * A rate document's earlier versions (`previous_versions`) are kept in this shape.
 */
export interface RateVersion extends RateTerms {
  datetime_start: Date | null;
  datetime_end: Date | null;
  description: string | null;
  /** When in the day or week it applies; absent or null: at all times (a rate as before timings). */
  timing?: RateTiming | null;
}

/**
 * A rate: one document per (pricelist_tag, carrier_tag, prefix) (a unique index). Its own fields are
 * its current version; `previous_versions` holds the versions a rate deck replaced (src/shared/domain/rate-decks),
 * each with a closed window, in time order, none overlapping another or the current one. Rating treats
 * every version as a candidate of its own, valid in its own window (src/shared/domain/rating/rating-index.ts).
 */
export interface PricelistRateDoc extends RateVersion {
  _id: string;
  pricelist_tag: string;
  carrier_tag: string;
  prefix: string;
  /**
   * timingKey(timing) (src/shared/domain/rating/timing.ts): unique with pricelist, carrier and prefix, so
   * one prefix may hold a peak and an off-peak rate. Absent on rates without a timing (the key is then
   * null for the unique index, as for every rate written before timings).
   */
  timing_key?: string;
  /** Earlier versions; absent or empty on rates never replaced by a deck. */
  previous_versions?: RateVersion[];
}

/** The copy of a rate kept on a running entry and a Transaction record. */
export interface RateSnapshot extends RateTerms {
  pricelist_tag: string;
  carrier_tag: string;
  prefix: string;
  description?: string | null;
  /**
   * Present only when the rate has timed versions: every price of this pricelist, carrier and prefix the
   * call may meet, so it is rated per segment (src/shared/domain/rating/tariff.ts). The snapshot's own
   * terms are the price in force at the call's start.
   */
  timed?: TimedPrices | null;
}

/** One price of a timed rate, as a call keeps it. */
export interface TimedPrice extends RateTerms {
  timing: RateTiming | null;
  description: string | null;
}

/** The prices a call of a timed rate may meet, and the clock and calendar they are read on. */
export interface TimedPrices {
  time_zone: string;
  prices: TimedPrice[];
  /** Holiday dates (local `YYYY-MM-DD`) from the day before the call's start, when a price reads holidays. */
  holidays: string[];
}

/** One stretch of a timed call at one price (docs/RATING.md, "A call across a boundary"). */
export interface ChargedSegment {
  prefix: string;
  /** Second of the call where the stretch's first charged increment starts. */
  from: number;
  /** Seconds charged in the stretch (whole increments). */
  seconds: number;
  /** The stretch's share of the fee, the connect fee aside: the shares and the connect fee add up to the fee. */
  fee: bigint;
  rate: number;
  rate_increment: number;
  interval_start: number;
  description: string | null;
  timing: RateTiming | null;
}

/** One entry of `AccountDoc.running_transactions` (the spec's AccountTransaction). */
export interface RunningTransaction {
  /** Unique to this entry (a random id given at begin): names its processing, its record and its charge. */
  id: string;
  transaction_tag: string;
  /**
   * The calling account, whose request created the call; the caller's own entry names itself. A parent
   * or a receiver holds one entry per (caller, tag): two customers may use the same tag.
   */
  origin_account_tag: string;
  /** callId(origin_account_tag, transaction_tag): the call's key within one account. */
  call_id: string;
  source: string;
  destination: string;
  /** `host:port` of the carrier chosen at begin, '' for inbound entries without a carrier. */
  carrier_ip: string;
  /** Snapshot of the rate at begin time; null when no rate applies (inbound without a rate). */
  rate: RateSnapshot | null;
  in_progress: boolean;
  inbound: boolean;
  timestamp_begin: Date;
  timestamp_end: Date | null;
  source_ip?: string | null;
  tags?: string[] | null;
  timestamp_auth?: Date | null;
  /**
   * Every account holding an entry for this call (the caller, its linked parent accounts, the
   * inbound receiver), so end and rollback reach all of them from any one.
   */
  call_parties?: string[];
  /** The agent job that inserted the entry, and its deadline (epoch ms): its outcome says whether it stays (src/shared/domain/calls/decisions.ts). */
  begin_job?: string | null;
  begin_deadline?: number;
  /** The agent job that ended the entry, and its deadline: processing is queued once that end is decided 'done'. */
  end_job?: string | null;
  end_deadline?: number | null;
  /**
   * True when the write that made the entry (begin) or ended it (end) was itself the job's decision
   * 'done' (a single-party call, issue 36): no decision document exists, the entry is the decision, and
   * it never needs the recovery sweep. docs/ARCHITECTURE.md, "Decided by its own write".
   */
  begin_decided?: boolean;
  end_decided?: boolean;
  /**
   * Set only on a reservation: a concurrency slot an authorization holds for a call not yet begun
   * (no rate, costs nothing), until this time unless begin takes it over. Absent or null on a call.
   */
  reserved_until?: Date | null;
  /**
   * On an account with spend limits: the money its authorization granted the call (the cost of its units
   * plus the headroom, on the dearest listed carrier), held against the limits from the reservation on,
   * so parallel calls never together pass them. Begin keeps it on the call's entry.
   */
  hold?: bigint | null;
}

/** Whether a running entry is an authorization's reservation rather than a call (begun or ended). */
export function isReservation(entry: Pick<RunningTransaction, 'reserved_until'>): boolean {
  return entry.reserved_until !== undefined && entry.reserved_until !== null;
}

/** Reservations whose time is up at `now`: they hold no slot and are removed when found in the way. */
export function expiredReservations<T extends Pick<RunningTransaction, 'reserved_until'>>(running: readonly T[], now: Date): T[] {
  return running.filter((e) => isReservation(e) && e.reserved_until!.getTime() <= now.getTime());
}

export interface AccountDoc {
  _id: string;
  account_tag: string;
  type: AccountType;
  balance: bigint;
  active: boolean;
  max_concurrent_transactions: number | null;
  name: string | null;
  notification_email: string | null;
  notification_mobile: string | null;
  carrier_tags: string[] | null;
  carrier_tags_override: string[] | null;
  customer_tag: string | null;
  linked_accounts: string[];
  pricelist_tags: string[] | null;
  tags: string[] | null;
  /** Low-balance alert threshold; null uses the global default. */
  balance_alert_threshold?: bigint | null;
  /**
   * Spend limits (docs/AGENT.md, "Spend limits"), each optional, in minor units: the most one call may cost,
   * and the most the account may spend in a rolling hour and a rolling day (its own share of every call).
   */
  max_call_cost?: bigint | null;
  hourly_spend_limit?: bigint | null;
  daily_spend_limit?: bigint | null;
  running_transactions: RunningTransaction[];
  /** The balance the account was created with; balance = opening_balance + its ledger (rating audit). */
  opening_balance?: bigint;
  /**
   * Balance changes made but whose ledger entry is not written yet (src/shared/domain/ledger): empty except
   * for the moment between the two writes, or after a crash between them until someone settles it.
   */
  ledger_pending?: LedgerMarker[];
  /**
   * The last import batch debit applied to the account (src/shared/domain/ledger/batch-debits.ts): overwritten
   * by the next one, which first makes sure this one's ledger entry exists.
   */
  import_marker?: LedgerMarker | null;
  /** Bumped by every balance change: the ledger's compare-and-swap. */
  ledger_rev?: number;
  /**
   * Agent jobs (begin, end) recorded abandoned on this account, their calling account: the job's own
   * deciding write requires its id to be absent, so a TIMEOUT answered after the fence stays true
   * (src/shared/domain/calls/decisions.ts); `done` when a rollback fenced a job decided 'done' by its own
   * write. Dropped by the recovery sweep once their job is settled (`done` ones with the decisions of their age).
   */
  fenced_jobs?: Array<{ job: string; at: Date; done?: boolean }>;
  /** Bumped by every change of running entries or balance; prepaid begins update conditionally on it. */
  rev?: number;
}

export type RecordState = 'pending' | 'charged' | 'imported' | 'rolling_back';

/** One rerating of a record (docs/RERATING.md): the fee it had and the fee it got, and when. */
export interface RecordRerating {
  /** The rerating run (`reratings` collection `_id`). */
  run: string;
  at: Date;
  fee_before: bigint;
  fee_after: bigint;
}

/**
 * A rerating under way on a record (its intent, written before the ledger moves): the new fee, rate and
 * segments. Whoever finds it finishes it (src/shared/domain/ledger/rerate.ts) before touching the record.
 */
export interface PendingRerating extends RecordRerating {
  rate: RateSnapshot | null;
  segments: ChargedSegment[] | null;
}

export interface TransactionDoc {
  _id: string;
  transaction_tag: string;
  account_tag: string;
  /**
   * The calling account of the call (its own records name themselves). Unique with account_tag and
   * transaction_tag: a parent keeps one record per child call even when two children use one tag.
   */
  origin_account_tag?: string;
  source: string | null;
  source_ip: string | null;
  destination: string | null;
  carrier_ip: string | null;
  tags: string[] | null;
  authorized: boolean | null;
  unauthorized_reason: string | null;
  destination_rate: RateSnapshot | null;
  timestamp_auth: Date | null;
  timestamp_begin: Date | null;
  timestamp_end: Date | null;
  inbound: boolean;
  failed: boolean;
  duration: number;
  fee: bigint;
  /** Only for a timed rate: what each stretch of the call was charged (docs/RATING.md); absent otherwise. */
  segments?: ChargedSegment[] | null;
  /** Every rerating that changed the fee, oldest first; the fee first charged is the first one's fee_before. */
  reratings?: RecordRerating[];
  /** A rerating under way (its ledger change may or may not be applied yet); absent otherwise. */
  rerate?: PendingRerating | null;
  /**
   * Written by the engine: 'pending' until its charge (ledger `charge:<_id>`) is applied, then
   * 'charged'; 'rolling_back' while a rollback refunds it (ledger `refund:<_id>`). 'imported': written
   * by an import batch (`charge_op`), charged by that batch's per-account debit: marking a million
   * records one by one would cost as much as writing them. Records created through the API have none.
   */
  state?: RecordState;
  /** Accounts that hold a record of the same call (see RunningTransaction.call_parties). */
  call_parties?: string[];
  /** Set by imports: the batch (`import_batches` `_id`) whose debit charges this record. */
  charge_op?: string;
  /**
   * Who charges a 'pending' record: 'processing' (an ended running entry, whose id is the record's
   * `_id`: once the entry is gone without a charge, the record will never be charged) or 'record'
   * (recordTransaction: the record itself is the intent, finished by whoever finds it).
   */
  charged_by?: 'processing' | 'record';
  /** When a rollback marked it 'rolling_back' (its refund follows at once; the sweep finishes it if not). */
  rolling_back_at?: Date;
  /** recordTransaction's job and deadline: the record stays only if that operation is decided 'done'. */
  record_job?: string;
  record_deadline?: number;
  /**
   * The `_id` of the account this record belonged to, once that account was deleted (closeAccount):
   * its tag may name another customer since, so rerating and rollback leave the record alone.
   */
  closed_account?: string;
  /** The begin and end jobs of the running entry this record charged (processing): a decision's last trace. */
  begin_job?: string | null;
  end_job?: string | null;
}

/** The key of a call within one account: its caller and its tag (tags are the caller's, not global). */
export function callId(originAccountTag: string, transactionTag: string): string {
  return `${encodeURIComponent(originAccountTag)}/${encodeURIComponent(transactionTag)}`;
}
