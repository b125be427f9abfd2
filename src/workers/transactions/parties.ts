import type { AccountDoc } from '../../shared/domain/types';
import { groupFindOne } from '../../shared/group-commands';
import type { Collections } from '../../shared/mongo';

export interface Party {
  account: AccountDoc;
  /** The receiving side of an inbound call. */
  inbound: boolean;
}

export type PartyRefusal = { reason: 'NOT_FOUND' | 'NOT_ACTIVE'; account_tag: string };

/**
 * The accounts a call touches: the caller, its linked (parent, reseller) accounts transitively, and the
 * receiving account of an inbound call. Each is read by its unique tag (grouped with the process's
 * concurrent reads of accounts); cycles are cut.
 */
export async function resolveParties(
  accounts: Collections['accounts'],
  accountTag: string,
  destinationAccountTag: string | null,
): Promise<{ parties: Party[] } | { refusal: PartyRefusal }> {
  const parties: Party[] = [];
  const seen = new Set<string>();
  const pending = [accountTag];
  while (pending.length > 0) {
    const tag = pending.shift()!;
    if (seen.has(tag)) continue;
    seen.add(tag);
    const account = await groupFindOne(accounts, 'account_tag', tag);
    if (!account) return { refusal: { reason: 'NOT_FOUND', account_tag: tag } };
    if (account.active === false) return { refusal: { reason: 'NOT_ACTIVE', account_tag: tag } };
    parties.push({ account, inbound: false });
    pending.push(...(account.linked_accounts ?? []));
  }
  if (destinationAccountTag && !seen.has(destinationAccountTag)) {
    const account = await groupFindOne(accounts, 'account_tag', destinationAccountTag);
    if (!account) return { refusal: { reason: 'NOT_FOUND', account_tag: destinationAccountTag } };
    if (account.active === false) return { refusal: { reason: 'NOT_ACTIVE', account_tag: destinationAccountTag } };
    parties.push({ account, inbound: true });
  }
  return { parties };
}
