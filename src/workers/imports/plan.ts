import type { TransactionDoc } from '../../shared/domain/types';
import type { ImportLine } from '../../shared/domain/queues/payloads';
import type { RatingIndex } from '../../shared/domain/rating';
import { type Reason, Reasons } from '../../shared/domain/calls';
import { ratedRecord } from '../transactions/records';
import { PartyRate, rateParties } from '../transactions/route';
import type { BatchAccount } from './accounts';
import { importRecordId } from '../../shared/domain/ledger';

/** A record written by an import batch: `charge_op` names the batch whose debit charges it. */
export type ImportRecordDoc = TransactionDoc & { charge_op: string; state: 'imported' };

export interface PlannedRecord {
  doc: ImportRecordDoc;
  /** Index of the line in the batch. */
  lineIndex: number;
  /** A linked (parent) account or the inbound receiver, not the caller. */
  secondary: boolean;
  /** The inbound receiver (its fee is not the caller's nor a parent's). */
  inbound: boolean;
}

export type LinePlan =
  | { kind: 'refused'; reason: Reason; account_tag?: string }
  /** The same call (account and tag) appears earlier in the batch. */
  | { kind: 'duplicate' }
  | { kind: 'planned'; caller: PlannedRecord; others: PlannedRecord[] };

interface Party {
  account: BatchAccount;
  inbound: boolean;
}

/**
 * The parties of a call, as resolveParties does for a single call: the caller, its linked accounts
 * transitively (cycles cut), then the receiving account of an inbound call. Any missing or inactive
 * one refuses the call.
 */
function parties(accounts: ReadonlyMap<string, BatchAccount>, line: ImportLine): Party[] | { reason: Reason; account_tag: string } {
  const out: Party[] = [];
  const seen = new Set<string>();
  const pending = [line.account_tag];
  const check = (tag: string) => {
    const account = accounts.get(tag);
    if (!account) return { reason: Reasons.NOT_FOUND, account_tag: tag };
    if (account.active === false) return { reason: Reasons.NOT_ACTIVE, account_tag: tag };
    return account;
  };
  while (pending.length > 0) {
    const tag = pending.shift()!;
    if (seen.has(tag)) continue;
    seen.add(tag);
    const account = check(tag);
    if ('reason' in account) return account;
    out.push({ account, inbound: false });
    pending.push(...(account.linked_accounts ?? []));
  }
  const receiver = line.destination_account_tag;
  if (receiver && !seen.has(receiver)) {
    const account = check(receiver);
    if ('reason' in account) return account;
    out.push({ account, inbound: true });
  }
  return out;
}

interface RatedLine {
  kind: 'rated';
  line: ImportLine;
  /** When the call began (the rating time), parsed once for every party's record. */
  at: Date;
  rates: Array<{ party: Party; rate: PartyRate }>;
  /** Every party's account, in order: each record of the call lists them. */
  callParties: string[];
}

function rateLine(
  accounts: ReadonlyMap<string, BatchAccount>,
  index: RatingIndex,
  line: ImportLine,
): RatedLine | { kind: 'refused'; reason: Reason; account_tag: string } {
  const resolved = parties(accounts, line);
  if (!Array.isArray(resolved)) return { kind: 'refused', ...resolved };
  const at = new Date(line.timestamp_begin);
  const rates = rateParties(index, resolved, { destination: line.destination, at, carrierIp: line.carrier_ip });
  if (!Array.isArray(rates))
    return { kind: 'refused', reason: Reasons.UNREACHABLE_DESTINATION, account_tag: rates.unreachable.account.account_tag };
  return { kind: 'rated', line, at, rates, callParties: rates.map((x) => x.party.account.account_tag) };
}

/**
 * Rates every line of a batch in memory and builds the records it would write, with the same rules as
 * recordTransaction (each party rated on its own pricelists; an unreachable destination for any
 * outbound party refuses the call; the inbound receiver is charged nothing). Pure: no I/O.
 *
 * Within a batch, the first line of a call wins: a later line with the same (account, tag) for the
 * caller is a duplicate (a party's record is keyed by account, caller and tag), and a party record already planned by an earlier line is left out (as
 * recordTransaction skips a party whose record exists). Callers are claimed before other parties so
 * the outcome does not depend on line order between the two roles.
 */
export function planBatch(
  lines: readonly ImportLine[],
  accounts: ReadonlyMap<string, BatchAccount>,
  index: RatingIndex,
  batchId: string,
): LinePlan[] {
  const claimed = new Set<string>();
  const key = (account: string, line: ImportLine) => `${account}\0${line.account_tag}\0${line.transaction_tag}`;
  const rated = lines.map((line) => rateLine(accounts, index, line));

  const build = (lineIndex: number, i: number): PlannedRecord => {
    const { line, at, rates, callParties } = rated[lineIndex] as RatedLine;
    const { party, rate } = rates[i];
    const accountTag = party.account.account_tag;
    const record = ratedRecord({
      id: importRecordId(batchId, accountTag, line.account_tag, line.transaction_tag),
      transaction_tag: line.transaction_tag,
      account_tag: accountTag,
      origin_account_tag: line.account_tag,
      source: line.source,
      source_ip: line.source_ip,
      destination: line.destination,
      carrier_ip: (line.carrier_ip ?? rates[0].rate.carrierIp) || null,
      tags: line.tags,
      authorized: null,
      timestamp_auth: line.timestamp_auth ? new Date(line.timestamp_auth) : null,
      timestamp_begin: at,
      timestamp_end: new Date(line.timestamp_end),
      inbound: party.inbound,
      rate: rate.rate,
      call_parties: callParties,
    });
    // Completed in place rather than copied (an import builds a million): `state` keeps its place, `charge_op` comes last.
    const doc: ImportRecordDoc = Object.assign(record, { charge_op: batchId, state: 'imported' as const });
    return {
      doc,
      lineIndex,
      secondary: i > 0,
      inbound: party.inbound,
    };
  };

  const plans: LinePlan[] = rated.map((r, lineIndex): LinePlan => {
    if (r.kind === 'refused') return r;
    const callerKey = key(r.line.account_tag, r.line);
    if (claimed.has(callerKey)) return { kind: 'duplicate' };
    claimed.add(callerKey);
    return { kind: 'planned', caller: build(lineIndex, 0), others: [] };
  });
  plans.forEach((plan, lineIndex) => {
    if (plan.kind !== 'planned') return;
    const { line, rates } = rated[lineIndex] as RatedLine;
    for (let i = 1; i < rates.length; i++) {
      const k = key(rates[i].party.account.account_tag, line);
      if (claimed.has(k)) continue;
      claimed.add(k);
      plan.others.push(build(lineIndex, i));
    }
  });
  return plans;
}
