import type { AuthorizationJob, AuthorizationResult } from '../../shared/queues/payloads';
import { availableBalance, canAffordStart, MAX_UNITS_CAP, maxAvailableUnits } from '../../shared/rating';
import { Reasons, TransactionDeps } from './deps';
import { resolveParties } from './parties';
import { rateParty } from './route';

/**
 * authorization: whether a call may start now, how long it may last, and the ordered carriers.
 * Reads only; it reserves nothing, so it never blocks a later begin.
 */
export async function authorize(deps: TransactionDeps, job: AuthorizationJob): Promise<AuthorizationResult> {
  const { accounts } = deps.ctx.mongo.collections;
  const refuse = (reason: string, balance: bigint | null = null, carriers: string[] = []): AuthorizationResult => ({
    authorized: false,
    unauthorized_reason: reason,
    max_available_units: 0,
    balance: balance === null ? null : balance.toString(),
    carriers,
    unauthorized_account_tag: null,
  });
  const resolved = await resolveParties(accounts, job.account_tag, job.destination_account_tag);
  if ('refusal' in resolved) return refuse(resolved.refusal.reason);
  const index = await deps.rating.index();
  const now = new Date();
  const caller = resolved.parties[0].account;
  let units = MAX_UNITS_CAP;
  let carriers: string[] = [];
  for (const [i, party] of resolved.parties.entries()) {
    const { account } = party;
    const rate = rateParty(index, account, party.inbound, { destination: job.destination, at: now, carrierIp: null });
    if (!rate) return refuse(Reasons.UNREACHABLE_DESTINATION, caller.balance);
    if (i === 0) carriers = rate.candidates.map((c) => c.routeString);
    const running = account.running_transactions ?? [];
    const max = account.max_concurrent_transactions;
    if (max !== null && max !== undefined && running.length >= max) {
      return refuse(Reasons.TOO_MANY_RUNNING_TRANSACTIONS, caller.balance, carriers);
    }
    if (party.inbound) continue;
    const available = availableBalance(account.balance, running, now);
    if (account.type === 'PREPAID' && !canAffordStart(rate.rate, available)) {
      return refuse(Reasons.BALANCE_INSUFFICIENT, caller.balance, carriers);
    }
    units = Math.min(units, maxAvailableUnits(rate.rate, available, account.type));
  }
  return { authorized: true, unauthorized_reason: null, max_available_units: units, balance: caller.balance.toString(), carriers, unauthorized_account_tag: null };
}
