/**
 * What the ledger stores. Money is bigint (BSON int64); a debit is negative, a credit positive.
 */

export type LedgerKind =
  /** One call's fee taken from one party (processing, recordTransaction). */
  | 'charge'
  /** An import batch's total for one account (CDR imports, recordTransactions). */
  | 'import'
  /** A record's fee given back (rollbackTransaction). */
  | 'refund'
  /** A record's fee corrected by a rerating run: the old fee less the new (a credit when it fell). */
  | 'rerate'
  /** An operator's change of the balance (management API). */
  | 'adjust'
  /**
   * A deleted account's closing (closeAccount): brings the sum of its tag's entries back to zero, so an
   * account created later under the same tag starts from its own opening balance.
   */
  | 'close';

/** An applied balance change, kept forever: its `_id` is the operation's permanent idempotency key. */
export interface LedgerEntryDoc {
  _id: string;
  account_tag: string;
  amount: bigint;
  kind: LedgerKind;
  transaction_tag: string | null;
  /** The record charged or refunded, the batch of an import debit, or the reason of an adjustment. */
  ref: string | null;
  /**
   * A settlement's debit (settlements.ts): the import batches whose records it charges on this account.
   * The ledger alone then proves which 'imported' records are charged, whatever becomes of the batches'
   * documents.
   */
  batches?: string[];
  at: Date;
}

/**
 * Sits in the account's `ledger_pending` from the atomic update that changed the balance until the
 * ledger entry exists; it carries the entry, so anyone can finish the operation from the account alone.
 */
export interface LedgerMarker {
  op: string;
  amount: bigint;
  kind: LedgerKind;
  transaction_tag: string | null;
  ref: string | null;
  batches?: string[];
  at: Date;
}

/** An operation to apply to one account, named by its permanent id. */
export type LedgerOp = Omit<LedgerMarker, 'at'> & { account_tag: string };

/**
 * Operation ids. Each is derived from something that exists once: a record `_id` (random, or derived
 * from a running entry's random id or from a batch id), a batch id, a request's random id. Never from
 * a transaction tag, which a client may use again after a rollback.
 */
export const opIds = {
  /** The fee of one record (processing or recordTransaction). */
  charge: (recordId: string) => `charge:${recordId}`,
  /** One account's share of one import batch. */
  importDebit: (batchId: string, accountTag: string) => `import:${batchId}:${accountTag}`,
  /** Giving back one record's fee: at most one per record, whatever charged it. */
  refund: (recordId: string) => `refund:${recordId}`,
  /** One rerating run's correction of one record: at most one per record per run. */
  rerate: (runId: string, recordId: string) => `rerate:${runId}:${recordId}`,
  /** An operator's balance change through the API. */
  adjust: (requestId: string) => `adjust:${requestId}`,
  /** The closing of a deleted account (its `_id`: a tag may be used again, an account id never). */
  close: (accountId: string) => `close:${accountId}`,
};

/** The charge of a call record's fee to its account, whoever applies it (processing, an end, recordTransaction). */
export function chargeOp(record: { _id: string; account_tag: string; fee: bigint; transaction_tag: string }): LedgerOp {
  return {
    op: opIds.charge(record._id),
    account_tag: record.account_tag,
    amount: -record.fee,
    kind: 'charge',
    transaction_tag: record.transaction_tag,
    ref: record._id,
  };
}

/** The marker an operation leaves on its account while its ledger entry is being written. */
export function markerOf(op: LedgerOp, at: Date = new Date()): LedgerMarker {
  return {
    op: op.op,
    amount: op.amount,
    kind: op.kind,
    transaction_tag: op.transaction_tag,
    ref: op.ref,
    ...(op.batches ? { batches: op.batches } : {}),
    at,
  };
}

/** The ledger entry a marker stands for (markerOf's inverse): written once the balance changed. */
export function entryOf(accountTag: string, marker: LedgerMarker): LedgerEntryDoc {
  return {
    _id: marker.op,
    account_tag: accountTag,
    amount: marker.amount,
    kind: marker.kind,
    transaction_tag: marker.transaction_tag,
    ref: marker.ref,
    ...(marker.batches ? { batches: marker.batches } : {}),
    at: marker.at,
  };
}
