/**
 * The ledger: every movement of money goes through this module (processing, recordTransaction,
 * imports, rollback, the management API's balance changes), and the batch model of imports (ids,
 * claims, results) lives here too, so that the agent, the CLI and the workers share one definition.
 *
 * Guarantees (within MongoDB's single-document atomicity, with at-least-once job delivery):
 * 1. Exactly once. Every balance change has an operation id that is permanent and globally unique,
 *    derived from something that exists once (a record `_id`, a batch id, a request id; never a
 *    transaction tag, which a client may reuse after a rollback). Once applied, the `ledger`
 *    collection keeps an entry under that id forever: there is no window after which a retry could
 *    apply it again, and a refund's id derives from the record it refunds, so there is at most one.
 * 2. No window between the balance and its entry. The balance changes in one atomic update that also
 *    pushes a marker (the whole entry) onto the account's `ledger_pending`; the entry is written next
 *    and the marker removed last. Whoever finds a marker can finish it from the account alone. A
 *    processing charge's marker, its entry written, is removed by the account's next begin or end
 *    write (settled-markers.ts) or by the recovery sweep; otherwise a marker that stays is a crash to
 *    recover (rating audit reports markers whose entry is missing), never a normal state. Import batch
 *    debits, which touch hundreds of accounts, keep theirs in one slot (`import_marker`) instead, which
 *    the next batch debit overwrites only after settling it (batch-debits.ts): one update per account.
 *    File imports debit through settlements (settlements.ts): one update per account for many batches.
 * 3. A missing entry proves the change did not happen. Every write that changes a balance is either
 *    guarded by a precondition only it can consume (applyGuarded: a running entry with a unique id,
 *    pulled by the same write) or conditional on the account's `ledger_rev` as read before the ledger
 *    was checked (applyOnce: compare-and-swap; every balance change bumps `ledger_rev`).
 * 4. The balance is a cached fold of the ledger: for every account,
 *    balance = opening_balance + sum(ledger entries) + sum(markers still pending).
 *    `rating audit` checks it, and that the charged records' fees match the ledger's charges.
 * 5. Intent first. What a charge is for is written before the balance changes: the 'pending' record
 *    (processing, recordTransaction) or the batch's records and claim (imports); refunds mark the
 *    record 'rolling_back' first. Whoever comes next (a retry, a rollback, the maintenance scan) can
 *    finish or undo an interrupted operation from what MongoDB holds.
 * Entries, marker removals and charged marks of concurrent operations travel grouped in one command per
 * collection (src/shared/infra/group-commands.ts); each keeps its own atomicity, outcome and order above.
 */
export { applyAt, applyGuarded, applyOnce, finishGuarded, settle, wasApplied, writeGuarded } from './apply';
export { isApplied } from './applied';
export type { ApplyOutcome } from './apply';
export { applyBatchDebits, debitStateOf, readBatchDebits, settleImportSlots } from './batch-debits';
export type { BatchDebitStateOf } from './batch-debits';
export * from './batches';
export { newSettlementId, settleImportBatches, settleLeftBehind, settlementDone } from './settlements';
export type { SettlementResult } from './settlements';
export { closeAccount } from './close';
export { chargeOp, markerOf, opIds } from './model';
export type { LedgerEntryDoc, LedgerKind, LedgerMarker, LedgerOp } from './model';
export type { LedgerStore } from './store';
export { spendRoom, spentInWindows } from './spend';
export { SettledMarkers } from './settled-markers';
export { finishRerating, rerateRecord, RERATABLE_STATES, type Rerated, type RerateOutcome } from './rerate';
