import type { Db } from 'mongodb';
import { isReservation, type AccountDoc, type TransactionDoc } from '../types';
import { ROLLBACK_OUTCOMES, type Collections } from '../store';
import { opIds, type LedgerEntryDoc, type LedgerMarker } from './model';

export interface AccountDifference {
  account_tag: string;
  /** balance - (opening_balance + ledger + pending markers); 0 when the fold holds. */
  balance_difference: bigint;
  /** fees of the account's charged records - the ledger's net charges (charges - refunds); 0 when they match. */
  records_difference: bigint;
}

/** What the call check found (auditCalls): each is a customer charged wrongly though the ledger balances. */
export type CallProblem =
  /** A record in state 'charged' whose `charge:<id>` is not in the ledger. */
  | 'charged record without its charge'
  /** A record in state 'charged' whose `refund:<id>` is in the ledger: a rolled-back call shown charged. */
  | 'charged record refunded'
  /** A record a rollback decided 'done' and carried out took away, there again. */
  | 'record of a rolled-back call'
  /** A running entry (not a reservation) of a call that also has a settled record on the same account. */
  | 'running entry of a recorded call';

export interface CallFinding {
  problem: CallProblem;
  account_tag: string;
  transaction_tag: string;
  record_id?: string;
  entry_id?: string;
}

export interface AuditReport {
  accounts: number;
  ledger_entries: number;
  records: number;
  /** Balance changes applied but not yet settled into the ledger (a crash to finish, or work in progress). */
  pending_markers: number;
  /** Records whose charge or refund is in progress ('pending', 'rolling_back'). */
  records_in_flight: number;
  differences: AccountDifference[];
  /** The call check: every finding is a defect, like a difference (`rating audit` exits non-zero). */
  calls: CallFinding[];
}

type AuditCollections = Pick<Collections, 'accounts' | 'ledger' | 'transactions' | 'outcomes'>;

type FoldedEntry = Pick<LedgerEntryDoc, '_id' | 'account_tag' | 'amount' | 'kind' | 'batches'>;

/** What the ledger says of a set of accounts. */
class LedgerFold {
  readonly sum = new Map<string, bigint>();
  readonly netCharges = new Map<string, bigint>();
  readonly ids = new Set<string>();
  /** (batch, account) pairs a settlement's debit charges (settlements.ts). */
  readonly settled = new Set<string>();
  entries = 0;
  /** Operations taken in from an account's markers whose entries the ledger read has not met (yet). */
  private readonly fromMarkers = new Set<string>();

  /**
   * An account's markers, taken in as the entries they stand for: a marker is a change applied to the
   * balance whose entry is written after it (apply.ts), and its record may be marked charged before the
   * entry is written (processing does both at once; a worker killed between them leaves it so until the
   * marker is settled). Read before the ledger, so an entry written in between is counted once.
   */
  addMarkers(accountTag: string, markers: readonly LedgerMarker[] | undefined): void {
    for (const marker of markers ?? []) {
      if (this.ids.has(marker.op)) continue;
      this.fold({ _id: marker.op, account_tag: accountTag, amount: marker.amount, kind: marker.kind, batches: marker.batches });
      this.fromMarkers.add(marker.op);
    }
  }

  /** A ledger entry as read; one whose marker was taken in before (addMarkers) is folded once. */
  add(entry: FoldedEntry): void {
    this.entries += 1;
    if (!this.fromMarkers.delete(entry._id)) this.fold(entry);
  }

  private fold(entry: FoldedEntry): void {
    this.ids.add(entry._id);
    for (const batch of entry.batches ?? []) this.settled.add(`${batch}\0${entry.account_tag}`);
    addTo(this.sum, entry.account_tag, entry.amount);
    // Charges and refunds move with records; adjustments and an account's closing do not.
    if (entry.kind !== 'adjust' && entry.kind !== 'close') addTo(this.netCharges, entry.account_tag, -entry.amount);
  }

  /**
   * The fee the ledger holds for a record: a rerating under way counts at its new fee once its ledger
   * change is in, at the old one until then (src/shared/domain/ledger/rerate.ts).
   */
  feeOf(record: Pick<TransactionDoc, '_id' | 'fee' | 'rerate'>): bigint {
    const intent = record.rerate;
    if (!intent) return record.fee;
    return this.ids.has(opIds.rerate(intent.run, record._id)) ? intent.fee_after : intent.fee_before;
  }

  /** Whether an operation's entry is in the ledger as read (a marker taken in stands for one not written yet). */
  written(op: string): boolean {
    return this.ids.has(op) && !this.fromMarkers.has(op);
  }

  /** Whether a record's fee is taken, by the ledger as read; 'pending' and 'rolling_back' ones are in flight. */
  charged(record: Pick<TransactionDoc, '_id' | 'account_tag' | 'state' | 'charge_op'>): { charged: boolean; inFlight: boolean } {
    switch (record.state) {
      case 'charged':
        return { charged: true, inFlight: false };
      case 'imported':
        return {
          charged:
            record.charge_op !== undefined &&
            (this.ids.has(opIds.importDebit(record.charge_op, record.account_tag)) ||
              this.settled.has(`${record.charge_op}\0${record.account_tag}`)),
          inFlight: false,
        };
      case 'pending':
        return { charged: this.ids.has(opIds.charge(record._id)), inFlight: true };
      default:
        return { charged: !this.ids.has(opIds.refund(record._id)), inFlight: true };
    }
  }
}

const addTo = (map: Map<string, bigint>, key: string, amount: bigint) => map.set(key, (map.get(key) ?? 0n) + amount);

const LEDGER_FIELDS = { _id: 1, account_tag: 1, amount: 1, kind: 1, batches: 1 } as const;
const RECORD_FIELDS = { _id: 1, account_tag: 1, transaction_tag: 1, fee: 1, state: 1, charge_op: 1, rerate: 1 } as const;
const ACCOUNT_FIELDS = { account_tag: 1, balance: 1, opening_balance: 1, ledger_pending: 1, import_marker: 1, ledger_rev: 1 } as const;

/** balance - (opening + ledger + markers whose entry is not written): a marker with its entry counts once. */
function balanceDifference(
  account: Pick<AccountDoc, 'account_tag' | 'balance' | 'opening_balance' | 'ledger_pending' | 'import_marker'>,
  fold: LedgerFold,
): { difference: bigint; pending: number } {
  // The import slot keeps its marker after settling: only a marker whose entry is missing is pending.
  const markers = [...(account.ledger_pending ?? []), ...(account.import_marker ? [account.import_marker] : [])];
  // Markers the fold took in (addMarkers) are in its sum already.
  const notInFold = markers.filter((m) => !fold.ids.has(m.op)).reduce((sum, m) => sum + m.amount, 0n);
  return {
    difference: account.balance - ((account.opening_balance ?? 0n) + (fold.sum.get(account.account_tag) ?? 0n) + notInFold),
    pending: markers.filter((m) => !fold.written(m.op)).length,
  };
}

/**
 * The ledger's promise, checked from MongoDB alone (a full read of accounts, ledger and records: an
 * operator's tool, never on the hot path). For every account:
 * - balance = opening_balance + sum(ledger entries) + sum(markers whose entry is not written yet);
 * - the fees of its charged records = the ledger's charges minus its refunds, an account's markers
 *   counting as the entries they stand for (LedgerFold.addMarkers). A record counts as charged
 *   when its state says so ('charged'), when it is 'imported' and its batch's debit of the account is in
 *   the ledger (under the batch's id, or a settlement's entry listing the batch), when it is 'pending'
 *   and its charge is in the ledger, or when it is 'rolling_back' and its refund is not in the ledger yet.
 * Exact while calls are charged (issue 31): the whole-database pass reads the ledger, the records and the
 * accounts one after the other, so money that moves between them looks like a difference. Each account
 * it finds off is read again on its own (stableDifference) until one read of it holds still; only a
 * difference that survives that is reported. Then the call check (auditCalls).
 */
export async function auditLedger(collections: AuditCollections, options: { recheckPauseMs?: number } = {}): Promise<AuditReport> {
  const fold = new LedgerFold();
  for await (const account of collections.accounts.find(
    { 'ledger_pending.0': { $exists: true } },
    { projection: { _id: 0, account_tag: 1, ledger_pending: 1 } },
  ))
    fold.addMarkers(account.account_tag, account.ledger_pending);
  for await (const entry of collections.ledger.find({}, { projection: LEDGER_FIELDS })) fold.add(entry);

  const recordFees = new Map<string, bigint>();
  let records = 0;
  let inFlight = 0;
  for await (const record of collections.transactions.find({ state: { $exists: true } }, { projection: RECORD_FIELDS })) {
    records += 1;
    const { charged, inFlight: flying } = fold.charged(record);
    if (flying) inFlight += 1;
    if (charged) addTo(recordFees, record.account_tag, fold.feeOf(record));
  }

  const suspects: string[] = [];
  let accounts = 0;
  let pendingMarkers = 0;
  const seen = new Set<string>();
  for await (const account of collections.accounts.find({}, { projection: ACCOUNT_FIELDS })) {
    accounts += 1;
    seen.add(account.account_tag);
    const { difference, pending } = balanceDifference(account, fold);
    pendingMarkers += pending;
    const recordsDifference = (recordFees.get(account.account_tag) ?? 0n) - (fold.netCharges.get(account.account_tag) ?? 0n);
    if (difference !== 0n || recordsDifference !== 0n) suspects.push(account.account_tag);
  }
  // Money moved on an account that no longer exists is a difference too (accounts with running calls
  // cannot be deleted; one with a history can, and keeps its ledger and records).
  for (const [tag, sum] of fold.netCharges) {
    if (!seen.has(tag) && sum !== (recordFees.get(tag) ?? 0n)) suspects.push(tag);
  }
  const differences: AccountDifference[] = [];
  for (const tag of suspects) {
    const difference = await stableDifference(collections, tag);
    if (difference.balance_difference !== 0n || difference.records_difference !== 0n) differences.push(difference);
  }
  const calls = await auditCalls(collections, options.recheckPauseMs ?? 1000);
  return {
    accounts,
    ledger_entries: fold.entries,
    records,
    pending_markers: pendingMarkers,
    records_in_flight: inFlight,
    differences,
    calls,
  };
}

const STABLE_ATTEMPTS = 20;

/**
 * One account's difference from a read of it alone that held still: the account, its ledger and its
 * records, then the account and its ledger's size again; a change in between (`ledger_rev`, the balance,
 * an entry written) and it is read again. The account's markers read first stand for entries not
 * written yet. Records change without the ledger only in ways that leave the fold as it was (a charged
 * mark after its marker or entry, a pending record inserted or dropped uncharged),
 * so a read with the account and its ledger unchanged around it is consistent. An account still moving
 * after every attempt is reported from its last read.
 */
export async function stableDifference(
  collections: Pick<Collections, 'accounts' | 'ledger' | 'transactions'>,
  tag: string,
): Promise<AccountDifference> {
  let last: AccountDifference = { account_tag: tag, balance_difference: 0n, records_difference: 0n };
  for (let attempt = 0; attempt < STABLE_ATTEMPTS; attempt++) {
    const before = await collections.accounts.findOne({ account_tag: tag }, { projection: ACCOUNT_FIELDS });
    const fold = new LedgerFold();
    fold.addMarkers(tag, before?.ledger_pending);
    for await (const entry of collections.ledger.find({ account_tag: tag }, { projection: LEDGER_FIELDS })) fold.add(entry);
    let fees = 0n;
    for await (const record of collections.transactions.find(
      { account_tag: tag, state: { $exists: true } },
      { projection: RECORD_FIELDS },
    )) {
      if (fold.charged(record).charged) fees += fold.feeOf(record);
    }
    const entriesAfter = await collections.ledger.countDocuments({ account_tag: tag });
    const after = await collections.accounts.findOne({ account_tag: tag }, { projection: ACCOUNT_FIELDS });
    last = {
      account_tag: tag,
      // A deleted account has no balance left to check; its records still answer to its ledger.
      balance_difference: before ? balanceDifference(before, fold).difference : 0n,
      records_difference: fees - (fold.netCharges.get(tag) ?? 0n),
    };
    const still =
      entriesAfter === fold.entries &&
      (before === null) === (after === null) &&
      (!before || (before.ledger_rev === after!.ledger_rev && before.balance === after!.balance));
    if (still) return last;
    await new Promise((resolve) => setTimeout(resolve, 20 * (attempt + 1)));
  }
  return last;
}

/**
 * The call check: what the balance fold cannot see, because each of these balances (a charge and its
 * refund, or nothing moved at all) while a customer is charged wrongly:
 * - a record 'charged' must have exactly one charge (`charge:<id>`, unique by its id) and no refund;
 * - a record taken away by a rollback decided 'done' and carried out must not exist again;
 * - a running call (not a reservation) must not also have a settled record on the same account.
 * Read while calls run, a finding may be an operation between its steps: each is looked at again after
 * `pauseMs` and reported only if it is still there (an operation's steps take milliseconds).
 */
export async function auditCalls(collections: AuditCollections, pauseMs = 1000): Promise<CallFinding[]> {
  const found = await callFindings(collections);
  if (found.length === 0) return [];
  await new Promise((resolve) => setTimeout(resolve, pauseMs));
  const again = new Set((await callFindings(collections)).map(findingKey));
  return found.filter((f) => again.has(findingKey(f)));
}

const findingKey = (f: CallFinding) => `${f.problem}\0${f.account_tag}\0${f.record_id ?? ''}\0${f.entry_id ?? ''}`;

async function callFindings(collections: AuditCollections): Promise<CallFinding[]> {
  const findings: CallFinding[] = [];
  // Charged records against their ledger entries, looked up by id in chunks.
  const charged = collections.transactions.find({ state: 'charged' }, { projection: { _id: 1, account_tag: 1, transaction_tag: 1 } });
  let chunk: Array<Pick<TransactionDoc, '_id' | 'account_tag' | 'transaction_tag'>> = [];
  const flush = async () => {
    const ids = chunk.flatMap((r) => [opIds.charge(r._id), opIds.refund(r._id)]);
    const present = new Set((await collections.ledger.find({ _id: { $in: ids } }, { projection: { _id: 1 } }).toArray()).map((e) => e._id));
    // A charge applied whose entry is not written yet is a marker on its account (addMarkers).
    const unwritten = chunk.filter((r) => !present.has(opIds.charge(r._id)));
    if (unwritten.length > 0) {
      const charges = unwritten.map((r) => opIds.charge(r._id));
      for await (const account of collections.accounts.find(
        { account_tag: { $in: [...new Set(unwritten.map((r) => r.account_tag))] }, 'ledger_pending.op': { $in: charges } },
        { projection: { _id: 0, ledger_pending: 1 } },
      ))
        for (const marker of account.ledger_pending ?? []) present.add(marker.op);
    }
    for (const r of chunk) {
      const base = { account_tag: r.account_tag, transaction_tag: r.transaction_tag, record_id: r._id };
      if (!present.has(opIds.charge(r._id))) findings.push({ problem: 'charged record without its charge', ...base });
      if (present.has(opIds.refund(r._id))) findings.push({ problem: 'charged record refunded', ...base });
    }
    chunk = [];
  };
  for await (const record of charged) {
    chunk.push(record);
    if (chunk.length >= 500) await flush();
  }
  if (chunk.length > 0) await flush();

  // Records that rollbacks carried out took away (their record ids, or the entry ids processing names records by).
  const rollbacks = collections.outcomes.find(
    { ...ROLLBACK_OUTCOMES, state: 'done', applied_at: { $exists: true } },
    { projection: { targets: 1 } },
  );
  let targets: string[] = [];
  const flushTargets = async () => {
    for (const r of await collections.transactions
      .find({ _id: { $in: targets } }, { projection: { _id: 1, account_tag: 1, transaction_tag: 1, state: 1 } })
      .toArray()) {
      // A pending one is a delivery of processing that read the entry before the rollback: in flight,
      // its reconcile (or the recovery sweep's) deletes it, the refund being in the ledger.
      if (r.state === 'pending') continue;
      findings.push({
        problem: 'record of a rolled-back call',
        account_tag: r.account_tag,
        transaction_tag: r.transaction_tag,
        record_id: r._id,
      });
    }
    targets = [];
  };
  for await (const rollback of rollbacks) {
    for (const t of rollback.targets ?? []) {
      const id = t.record_id ?? t.entry_id;
      if (id) targets.push(id);
    }
    if (targets.length >= 500) await flushTargets();
  }
  if (targets.length > 0) await flushTargets();

  // Running calls beside a record of the same call on the same account (processing's own record, named
  // by the entry's id, is the call being charged: not a finding).
  const running = collections.accounts.find<Pick<AccountDoc, 'account_tag' | 'running_transactions'>>(
    { 'running_transactions.0': { $exists: true } },
    { projection: { _id: 0, account_tag: 1, running_transactions: 1 } },
  );
  for await (const account of running) {
    for (const entry of account.running_transactions ?? []) {
      if (isReservation(entry)) continue;
      const recorded = await collections.transactions.findOne(
        { account_tag: account.account_tag, transaction_tag: entry.transaction_tag, origin_account_tag: entry.origin_account_tag },
        { projection: { _id: 1, state: 1 } },
      );
      if (recorded && recorded._id !== entry.id && recorded.state !== 'pending' && recorded.state !== 'rolling_back') {
        findings.push({
          problem: 'running entry of a recorded call',
          account_tag: account.account_tag,
          transaction_tag: entry.transaction_tag,
          entry_id: entry.id,
          record_id: recorded._id,
        });
      }
    }
  }
  return findings;
}

/** The last audit a worker ran (AUDIT_INTERVAL_SECONDS), kept for the metrics every process exports. */
export interface StoredAudit {
  _id: 'latest';
  at: Date;
  report: AuditReport;
}

const auditsOf = (db: Db) => db.collection<StoredAudit>('ledger_audits');

export async function storeAudit(db: Db, report: AuditReport): Promise<void> {
  await auditsOf(db).replaceOne({ _id: 'latest' }, { at: new Date(), report }, { upsert: true });
}

export async function latestAudit(db: Db): Promise<StoredAudit | null> {
  return auditsOf(db).findOne({ _id: 'latest' });
}
