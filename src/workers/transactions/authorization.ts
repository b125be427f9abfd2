import { randomUUID } from 'node:crypto';
import { callId, RateSnapshot, RunningTransaction } from '../../shared/domain/types';
import {
  type AuthorizationJob,
  type AuthorizationResult,
  authorized,
  beforeDeadline,
  notAuthorized,
  type Reason,
  Reasons,
} from '../../shared/domain/calls';
import { availableBalance, canAffordStart, grantUnits, MAX_UNITS_CAP } from '../../shared/domain/rating';
import { TransactionDeps } from './deps';
import { removeEntry } from './entries';
import { Party, resolveParties } from './parties';
import { reserveSlot, slotsHeld } from './reservations';
import { PartyRate, rateOnCarrier, rateParty } from './route';

type Refuse = (reason: Reason, by: string | null) => AuthorizationResult;

/**
 * authorization: whether a call may start now, how long it may last, and the ordered carriers.
 * `max_available_units` keeps the no-overdraft headroom (units.ts); a prepaid party left with 0 units
 * refuses, since a proxy reads a timeout of 0 as none. With a transaction_tag, a concurrency slot is
 * reserved on every party that has a limit (reservations.ts), all or none: a refusal by any party
 * releases those already made. An answer past the agent's deadline (which then says TIMEOUT, i.e. not
 * authorized) releases them too.
 */
export async function authorize(deps: TransactionDeps, job: AuthorizationJob): Promise<AuthorizationResult> {
  const { accounts } = deps.ctx.mongo.collections;
  const resolved = await resolveParties(accounts, job.account_tag, job.destination_account_tag);
  let carriers: string[] = [];
  const callerBalance = () => ('parties' in resolved ? resolved.parties[0].account.balance.toString() : null);
  const refuse: Refuse = (reason, by) => notAuthorized(reason, { account_tag: by, balance: callerBalance(), carriers });
  if ('refusal' in resolved) return refuse(resolved.refusal.reason, resolved.refusal.account_tag);
  const index = await deps.rating.index();
  const now = new Date();
  const call = job.transaction_tag === null ? null : callId(job.account_tag, job.transaction_tag);
  const rated: Array<{ party: Party; rate: PartyRate; available: bigint }> = [];
  for (const [i, party] of resolved.parties.entries()) {
    const { account } = party;
    const rate = rateParty(index, account, party.inbound, { destination: job.destination, at: now, carrierIp: null });
    if (!rate) return refuse(Reasons.UNREACHABLE_DESTINATION, account.account_tag);
    if (i === 0) carriers = rate.candidates.map((c) => c.routeString);
    const running = account.running_transactions ?? [];
    const max = account.max_concurrent_transactions;
    if (max !== null && max !== undefined && slotsHeld(running, now, call ?? '') >= max) {
      return refuse(Reasons.TOO_MANY_RUNNING_TRANSACTIONS, account.account_tag);
    }
    if (!party.inbound) rated.push({ party, rate, available: availableBalance(account.balance, running, now) });
  }
  const grant = grantOnEveryRoute(rated, resolved.parties[0], now, deps.ctx.config.authorizationHeadroomSeconds);
  if ('refusedBy' in grant) return refuse(Reasons.BALANCE_INSUFFICIENT, grant.refusedBy);
  carriers = grant.carriers;
  const units = grant.units;
  if (call !== null) {
    const refusal = await reserveAll(deps, job, call, resolved.parties, now, refuse);
    if (refusal) return refusal;
  }
  return authorized(units, callerBalance(), carriers);
}

/**
 * The grant that holds whichever listed carrier the call goes out on (issue 31, defect 1; docs/SIP.md,
 * "Failover"): a proxy fails over along `carriers`, and begin bills every party at its rate on the
 * carrier that answered (a party without a rate there at its own first route). So the grant is the
 * least, over the listed carriers and the paying parties, of what that party's balance covers at that
 * rate: the dearest route decides. A carrier on which some prepaid party could not pay a single second
 * is left out of the list (the call may still go out on the others); none left is BALANCE_INSUFFICIENT,
 * named after the party that could not pay on the first carrier.
 */
function grantOnEveryRoute(
  rated: ReadonlyArray<{ party: Party; rate: PartyRate; available: bigint }>,
  caller: Party,
  start: Date,
  headroomSeconds: number,
): { units: number; carriers: string[] } | { refusedBy: string } {
  const unitsOn = ({ party, available }: { party: Party; available: bigint }, rate: RateSnapshot | null) => {
    const { account } = party;
    if (account.type === 'PREPAID' && !canAffordStart(rate, available)) return 0;
    return grantUnits(rate, start, available, account.type, MAX_UNITS_CAP, headroomSeconds);
  };
  let units = MAX_UNITS_CAP;
  const carriers: string[] = [];
  let refusedBy: string | null = null;
  const listed = rated.length > 0 ? rated[0].rate.candidates : [];
  for (const carrier of listed) {
    let onCarrier = MAX_UNITS_CAP;
    for (const r of rated) {
      const partyUnits = unitsOn(r, rateOnCarrier(r.rate, carrier));
      if (partyUnits === 0 && r.party.account.type === 'PREPAID') {
        refusedBy ??= r.party.account.account_tag;
        onCarrier = 0;
        break;
      }
      onCarrier = Math.min(onCarrier, partyUnits);
    }
    if (onCarrier === 0) continue;
    units = Math.min(units, onCarrier);
    carriers.push(carrier.routeString);
  }
  if (carriers.length === 0) return { refusedBy: refusedBy ?? caller.account.account_tag };
  return { units, carriers };
}

/** Reserves a slot for the call on every party, or none: the refusal, having released what it made. */
async function reserveAll(
  deps: TransactionDeps,
  job: AuthorizationJob,
  call: string,
  parties: Party[],
  now: Date,
  refuse: Refuse,
): Promise<AuthorizationResult | null> {
  const made: Array<{ account_tag: string; id: string }> = [];
  const release = () => Promise.all(made.map((m) => removeEntry(deps, m.account_tag, m.id)));
  const until = new Date(now.getTime() + deps.ctx.config.reservationSeconds * 1000);
  const callParties = parties.map((p) => p.account.account_tag);
  for (const party of parties) {
    const reserved = await reserveSlot(deps, party.account, reservationOf(job, call, party, callParties, now, until), now);
    if (!reserved.ok) {
      await release();
      return refuse(reserved.reason, party.account.account_tag);
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
