import { randomUUID } from 'node:crypto';
import { callId, isReservation, RateSnapshot, RunningTransaction } from '../../shared/domain/types';
import {
  type AuthorizationJob,
  type AuthorizationResult,
  authorized,
  beforeDeadline,
  notAuthorized,
  type Reason,
  Reasons,
} from '../../shared/domain/calls';
import {
  availableBalance,
  dearestFeeWhileRinging,
  grantWhileRinging,
  hasSpendLimits,
  hasWindowLimits,
  MAX_UNITS_CAP,
  type AnswerWindow,
  type RouteCandidate,
} from '../../shared/domain/rating';
import { spendRoom } from '../../shared/domain/ledger';
import { TransactionDeps } from './deps';
import { removeEntry } from './entries';
import { Party, resolveParties } from './parties';
import { reserveSlot, slotsHeld } from './reservations';
import { PartyRate, rateOnCarrier, rateParty } from './route';

type Refuse = (reason: Reason, by: string | null) => AuthorizationResult;

/** Calls running on a caller beyond which its read is not kept for the begin (keepForBegin). */
const KEPT_MAX_RUNNING = 4;

/** Times authorization decides again because a party with spend limits changed before its hold was written. */
const MAX_ATTEMPTS = 50;

/**
 * A party that pays: its rates, its available balance, and the room its spend limits leave (null: none).
 * `later`: its rates at each instant of the ringing time where they may differ from now's (a rate
 * version or a timed price starting meanwhile, or another prefix in force: RatingIndex.routeChangesBetween).
 */
interface RatedParty {
  party: Party;
  rate: PartyRate;
  later: PartyRate[];
  available: bigint;
  room: bigint | null;
}

/**
 * authorization: whether a call may start now, how long it may last, and the ordered carriers.
 * `max_available_units` keeps the no-overdraft headroom (units.ts); a prepaid party left with 0 units
 * refuses, since a proxy reads a timeout of 0 as none. Spend limits (src/shared/domain/rating/limits.ts)
 * bound the grant like a balance, for prepaid and postpaid alike. With a transaction_tag, a reservation
 * is made on every party that has a concurrency limit (its slot) or hourly/daily limits (its hold: the
 * money the grant may cost it), all or none (reservations.ts): a refusal by any party releases those
 * already made. An answer past the agent's deadline (which then says TIMEOUT, i.e. not authorized)
 * releases them too.
 */
export async function authorize(deps: TransactionDeps, job: AuthorizationJob): Promise<AuthorizationResult> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const result = await tryAuthorize(deps, job);
    if (result !== 'changed') return result;
  }
  return notAuthorized(Reasons.BUSY);
}

async function tryAuthorize(deps: TransactionDeps, job: AuthorizationJob): Promise<AuthorizationResult | 'changed'> {
  const { accounts } = deps.ctx.mongo.collections;
  const resolved = await resolveParties(accounts, job.account_tag, job.destination_account_tag);
  let carriers: string[] = [];
  const callerBalance = () => ('parties' in resolved ? resolved.parties[0].account.balance.toString() : null);
  const refuse: Refuse = (reason, by) => notAuthorized(reason, { account_tag: by, balance: callerBalance(), carriers });
  if ('refusal' in resolved) return refuse(resolved.refusal.reason, resolved.refusal.account_tag);
  const index = await deps.rating.index();
  const now = new Date();
  const call = job.transaction_tag === null ? null : callId(job.account_tag, job.transaction_tag);
  // A tag the caller already has running names another call: a SIP caller chooses its Call-ID, and a
  // proxy that rolls back a cancelled call by that tag would take the running one back uncharged
  // (docs/SIP.md, "The transaction tag"). Read from the account already in hand: no command more.
  const caller = resolved.parties[0].account;
  if (call !== null && (caller.running_transactions ?? []).some((e) => e.call_id === call && !isReservation(e)))
    return refuse(Reasons.DUPLICATE_TRANSACTION, caller.account_tag);
  // The call is rated from its answer, which may come until its reservation ends (docs/AGENT.md, "The
  // grant holds for every instant the call may be answered at"): the grant is sized for all of them.
  const ringing: AnswerWindow = { from: now, to: new Date(now.getTime() + deps.ctx.config.reservationSeconds * 1000) };
  const rated: RatedParty[] = [];
  for (const [i, party] of resolved.parties.entries()) {
    const { account } = party;
    const rate = rateParty(index, account, party.inbound, { destination: job.destination, at: now, carrierIp: null });
    if (!rate) return refuse(Reasons.UNREACHABLE_DESTINATION, account.account_tag);
    const later = party.inbound
      ? []
      : index
          .routeChangesBetween(account.pricelist_tags, job.destination, ringing.from, ringing.to)
          .flatMap((at) => rateParty(index, account, party.inbound, { destination: job.destination, at, carrierIp: null }) ?? []);
    if (i === 0) carriers = rate.candidates.map((c) => c.routeString);
    const running = account.running_transactions ?? [];
    const max = account.max_concurrent_transactions;
    if (max !== null && max !== undefined && slotsHeld(running, now, call ?? '') >= max) {
      return refuse(Reasons.TOO_MANY_RUNNING_TRANSACTIONS, account.account_tag);
    }
    if (!party.inbound) rated.push({ party, rate, later, available: availableBalance(account.balance, running, now), room: null });
  }
  // Spending is read only for the accounts that have hourly or daily limits, all at once.
  await Promise.all(
    rated.map(async (r) => {
      r.room = await spendRoom(deps.ctx.mongo.collections, r.party.account, now, call);
    }),
  );
  const grant = grantOnEveryRoute(rated, resolved.parties[0], ringing, deps.ctx.config.authorizationHeadroomSeconds);
  if ('refusal' in grant) return refuse(grant.refusal.reason, grant.refusal.by);
  carriers = grant.carriers;
  if (call !== null) {
    const refusal = await reserveAll(deps, job, call, resolved.parties, grant.holds, now, refuse);
    if (refusal) return refusal;
    keepForBegin(deps, resolved.parties);
  }
  return authorized(grant.units, callerBalance(), carriers);
}

/**
 * A single-party call's caller, as read here, kept for its begin (authorization-reads.ts), when this
 * authorization wrote nothing to it (no concurrency limit and no spend limits: no reservation, no hold)
 * and it has few calls running: an account with many changes before the begin comes (its read would be
 * out of date) and its document is large (a trunk holds hundreds of entries), not worth the memory.
 */
function keepForBegin(deps: TransactionDeps, parties: Party[]): void {
  const [caller] = parties;
  const max = caller.account.max_concurrent_transactions;
  if (parties.length !== 1 || (max !== null && max !== undefined) || hasSpendLimits(caller.account)) return;
  if ((caller.account.running_transactions?.length ?? 0) > KEPT_MAX_RUNNING) return;
  deps.authorizationReads?.keep(caller.account);
}

type Grant =
  | { units: number; carriers: string[]; holds: ReadonlyMap<string, bigint> }
  | { refusal: { reason: typeof Reasons.BALANCE_INSUFFICIENT | typeof Reasons.SPEND_LIMIT_EXCEEDED; by: string } };

/**
 * The grant that holds whichever listed carrier the call goes out on (issue 31, defect 1; docs/SIP.md,
 * "Failover"): a proxy fails over along `carriers`, and begin bills every party at its rate on the
 * carrier that answered (a party without a rate there at its own first route). So the grant is the
 * least, over the listed carriers and the paying parties, of what that party's balance and spend limits
 * cover at that rate: the dearest route decides. Likewise for when the call is answered: the least over
 * every start in the ringing time (ringing.ts), on the rates of now and, where they may change, of the
 * ringing time's end. A carrier on which some party could not pay a single second (a prepaid balance,
 * or the limits' room) is left out of the list (the call may still go out on the others); none left is
 * BALANCE_INSUFFICIENT or SPEND_LIMIT_EXCEEDED, named after the party that could not pay on the first
 * carrier. Each party with hourly or daily limits holds what the grant may cost it on its dearest kept
 * carrier and start (the units plus the headroom).
 */
function grantOnEveryRoute(rated: readonly RatedParty[], caller: Party, ringing: AnswerWindow, headroomSeconds: number): Grant {
  const fits = (rate: RateSnapshot | null, money: bigint, type: 'PREPAID' | 'POSTPAID') =>
    grantWhileRinging(rate, ringing, money, type, MAX_UNITS_CAP, headroomSeconds);
  /** The party's rates on this carrier: now's and, where they may differ, those of later in the ringing time. */
  const ratesOn = (r: RatedParty, carrier: RouteCandidate): Array<RateSnapshot | null> => {
    const rates = [rateOnCarrier(r.rate, carrier)];
    for (const later of r.later) rates.push(rateOnCarrier(later, carrier));
    return rates;
  };
  const unitsOn = (r: RatedParty, carrier: RouteCandidate) => {
    let byBalance = MAX_UNITS_CAP;
    let byLimits = MAX_UNITS_CAP;
    for (const rate of ratesOn(r, carrier)) {
      byBalance = Math.min(byBalance, fits(rate, r.available, r.party.account.type));
      if (r.room !== null) byLimits = Math.min(byLimits, fits(rate, r.room, 'PREPAID'));
    }
    return { units: Math.min(byBalance, byLimits), limited: byLimits === 0 };
  };
  let units = MAX_UNITS_CAP;
  const kept: RouteCandidate[] = [];
  let refusal: Extract<Grant, { refusal: unknown }>['refusal'] | null = null;
  const listed = rated.length > 0 ? rated[0].rate.candidates : [];
  for (const carrier of listed) {
    let onCarrier = MAX_UNITS_CAP;
    for (const r of rated) {
      const party = unitsOn(r, carrier);
      if (party.units === 0 && (party.limited || r.party.account.type === 'PREPAID')) {
        refusal ??= {
          reason: party.limited ? Reasons.SPEND_LIMIT_EXCEEDED : Reasons.BALANCE_INSUFFICIENT,
          by: r.party.account.account_tag,
        };
        onCarrier = 0;
        break;
      }
      onCarrier = Math.min(onCarrier, party.units);
    }
    if (onCarrier === 0) continue;
    units = Math.min(units, onCarrier);
    kept.push(carrier);
  }
  if (kept.length === 0) return { refusal: refusal ?? { reason: Reasons.BALANCE_INSUFFICIENT, by: caller.account.account_tag } };
  const holds = new Map<string, bigint>();
  for (const r of rated) {
    if (!hasWindowLimits(r.party.account)) continue;
    let hold = 0n;
    for (const carrier of kept) {
      for (const rate of ratesOn(r, carrier)) {
        const cost = rate === null ? 0n : dearestFeeWhileRinging(rate, ringing, units + headroomSeconds);
        if (cost > hold) hold = cost;
      }
    }
    holds.set(r.party.account.account_tag, hold);
  }
  return { units, carriers: kept.map((c) => c.routeString), holds };
}

/** Reserves a slot for the call on every party, or none: the refusal, having released what it made. */
async function reserveAll(
  deps: TransactionDeps,
  job: AuthorizationJob,
  call: string,
  parties: Party[],
  holds: ReadonlyMap<string, bigint>,
  now: Date,
  refuse: Refuse,
): Promise<AuthorizationResult | 'changed' | null> {
  const made: Array<{ account_tag: string; id: string }> = [];
  const release = () => Promise.all(made.map((m) => removeEntry(deps, m.account_tag, m.id)));
  const until = new Date(now.getTime() + deps.ctx.config.reservationSeconds * 1000);
  const callParties = parties.map((p) => p.account.account_tag);
  const reserves = (p: Party) =>
    holds.has(p.account.account_tag) ||
    (p.account.max_concurrent_transactions !== null && p.account.max_concurrent_transactions !== undefined);
  // A rollback finds a call's parties from what the caller holds of it: when a later party reserves
  // (a reseller's hold or slot), the caller keeps a reservation too, though it has no limit of its own.
  const callerMarks = parties.slice(1).some(reserves);
  for (const [i, party] of parties.entries()) {
    const hold = holds.get(party.account.account_tag);
    const reservation = { ...reservationOf(job, call, party, callParties, now, until), ...(hold !== undefined ? { hold } : {}) };
    const reserved = await reserveSlot(deps, party.account, reservation, now, i === 0 && callerMarks);
    if (!reserved.ok) {
      await release();
      return reserved.reason === 'changed' ? 'changed' : refuse(reserved.reason, party.account.account_tag);
    }
    if (reserved.made) made.push({ account_tag: party.account.account_tag, id: reserved.made });
  }
  // The agent has stopped waiting and answers TIMEOUT: not authorized, so nothing may stay held.
  if (!beforeDeadline(job.deadline)) {
    await release();
    return refuse(Reasons.TIMEOUT, null);
  }
  return null;
}

function reservationOf(
  job: AuthorizationJob,
  call: string,
  party: Party,
  callParties: string[],
  now: Date,
  until: Date,
): RunningTransaction {
  return {
    id: randomUUID(),
    transaction_tag: job.transaction_tag!,
    origin_account_tag: job.account_tag,
    call_id: call,
    source: job.source ?? '',
    destination: job.destination,
    carrier_ip: '',
    rate: null,
    in_progress: true,
    inbound: party.inbound,
    timestamp_begin: now,
    timestamp_end: null,
    call_parties: callParties,
    reserved_until: until,
  };
}
