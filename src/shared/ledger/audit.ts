import type { Db } from 'mongodb';
import type { Collections } from '../mongo';
import { opIds } from './model';

export interface AccountDifference {
  account_tag: string;
  /** balance - (opening_balance + ledger + pending markers); 0 when the fold holds. */
  balance_difference: bigint;
  /** fees of the account's charged records - the ledger's net charges (charges - refunds); 0 when they match. */
  records_difference: bigint;
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
}

/**
 * The ledger's promise, checked from MongoDB alone (a full read of accounts, ledger and records: an
 * operator's tool, never on the hot path). For every account:
 * - balance = opening_balance + sum(ledger entries) + sum(markers whose entry is not written yet);
 * - the fees of its charged records = the ledger's charges minus its refunds. A record counts as charged
 *   when its state says so ('charged'), when it is 'imported' and its batch's debit of the account is in
 *   the ledger (under the batch's id, or a settlement's entry listing the batch), when it is 'pending'
 *   and its charge is in the ledger, or when it is 'rolling_back' and its refund is not in the ledger yet.
 */
export async function auditLedger(collections: Pick<Collections, 'accounts' | 'ledger' | 'transactions'>): Promise<AuditReport> {
  const ledgerSum = new Map<string, bigint>();
  const netCharges = new Map<string, bigint>();
  const ids = new Set<string>();
  const add = (map: Map<string, bigint>, key: string, amount: bigint) => map.set(key, (map.get(key) ?? 0n) + amount);
  let entries = 0;
  // (batch, account) pairs a settlement's debit charges (settlements.ts).
  const settled = new Set<string>();
  for await (const entry of collections.ledger.find({}, { projection: { _id: 1, account_tag: 1, amount: 1, kind: 1, batches: 1 } })) {
    entries += 1;
    ids.add(entry._id);
    for (const batch of entry.batches ?? []) settled.add(`${batch}\0${entry.account_tag}`);
    add(ledgerSum, entry.account_tag, entry.amount);
    if (entry.kind !== 'adjust') add(netCharges, entry.account_tag, -entry.amount);
  }

  const recordFees = new Map<string, bigint>();
  let records = 0;
  let inFlight = 0;
  const cursor = collections.transactions.find({ state: { $exists: true } }, { projection: { _id: 1, account_tag: 1, fee: 1, state: 1, charge_op: 1 } });
  for await (const record of cursor) {
    records += 1;
    let charged: boolean;
    switch (record.state) {
      case 'charged':
        charged = true;
        break;
      case 'imported':
        charged =
          record.charge_op !== undefined &&
          (ids.has(opIds.importDebit(record.charge_op, record.account_tag)) || settled.has(`${record.charge_op}\0${record.account_tag}`));
        break;
      case 'pending':
        inFlight += 1;
        charged = ids.has(opIds.charge(record._id));
        break;
      default:
        inFlight += 1;
        charged = !ids.has(opIds.refund(record._id));
    }
    if (charged) add(recordFees, record.account_tag, record.fee);
  }

  const differences: AccountDifference[] = [];
  let accounts = 0;
  let pendingMarkers = 0;
  const seen = new Set<string>();
  for await (const account of collections.accounts.find({}, { projection: { account_tag: 1, balance: 1, opening_balance: 1, ledger_pending: 1, import_marker: 1 } })) {
    accounts += 1;
    seen.add(account.account_tag);
    // A marker is pending only while its entry is missing: one whose entry is written (its removal
    // not done yet, or interrupted) is counted by the ledger, not twice. The import slot keeps its
    // marker after settling.
    const unsettled = [...(account.ledger_pending ?? []), ...(account.import_marker ? [account.import_marker] : [])].filter((m) => !ids.has(m.op));
    const pending = unsettled.reduce((sum, m) => sum + m.amount, 0n);
    pendingMarkers += unsettled.length;
    const balanceDifference = account.balance - ((account.opening_balance ?? 0n) + (ledgerSum.get(account.account_tag) ?? 0n) + pending);
    const recordsDifference = (recordFees.get(account.account_tag) ?? 0n) - (netCharges.get(account.account_tag) ?? 0n);
    if (balanceDifference !== 0n || recordsDifference !== 0n) {
      differences.push({ account_tag: account.account_tag, balance_difference: balanceDifference, records_difference: recordsDifference });
    }
  }
  // Money moved on an account that no longer exists is a difference too (accounts with running calls
  // cannot be deleted; one with a history can, and keeps its ledger).
  for (const [tag, sum] of netCharges) {
    if (!seen.has(tag) && sum !== (recordFees.get(tag) ?? 0n)) {
      differences.push({ account_tag: tag, balance_difference: 0n, records_difference: (recordFees.get(tag) ?? 0n) - sum });
    }
  }
  return { accounts, ledger_entries: entries, records, pending_markers: pendingMarkers, records_in_flight: inFlight, differences };
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
