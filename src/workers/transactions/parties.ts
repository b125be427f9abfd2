import type { AccountDoc } from '../../shared/domain/types';
import { groupFindOne } from '../../shared/infra/group-commands';
import type { Collections } from '../../shared/domain/store';
import { Reasons } from '../../shared/domain/calls';

export interface Party {
  account: AccountDoc;
  /** The receiving side of an inbound call. */
  inbound: boolean;
}

export type PartyRefusal = { reason: typeof Reasons.NOT_FOUND | typeof Reasons.NOT_ACTIVE; account_tag: string };

/**
 * The accounts a call touches: the caller, its linked (parent, reseller) accounts transitively, and the
 * receiving account of an inbound call. Each is read by its unique tag (grouped with the process's
 * concurrent reads of accounts); cycles are cut. The accounts of one level of links are read at once,
 * and the receiver with the caller: each sequential read is a wait in line for a busy server, and
 * call setup waits for all of them. The order, and so which party a refusal names, is the chain's:
 * caller, its links level by level in their listed order, then the receiver.
 */
export async function resolveParties(
  accounts: Collections['accounts'],
  accountTag: string,
  destinationAccountTag: string | null,
): Promise<{ parties: Party[] } | { refusal: PartyRefusal }> {
  const parties: Party[] = [];
  const seen = new Set<string>();
  const read = (tag: string) => groupFindOne(accounts, 'account_tag', tag);
  const receiver = destinationAccountTag && destinationAccountTag !== accountTag ? read(destinationAccountTag) : null;
  // Read but not waited for when the chain refuses first: it must not surface as an unhandled rejection.
  receiver?.catch(() => undefined);
  let level = [accountTag];
  while (level.length > 0) {
    const tags = level.filter((tag, i) => !seen.has(tag) && level.indexOf(tag) === i);
    tags.forEach((tag) => seen.add(tag));
    const docs = await Promise.all(tags.map(read));
    level = [];
    for (const [i, account] of docs.entries()) {
      const refusal = refusalOf(tags[i], account);
      if (refusal) return { refusal };
      parties.push({ account: account!, inbound: false });
      level.push(...(account!.linked_accounts ?? []));
    }
  }
  if (destinationAccountTag && !seen.has(destinationAccountTag)) {
    const account = await receiver;
    const refusal = refusalOf(destinationAccountTag, account ?? null);
    if (refusal) return { refusal };
    parties.push({ account: account!, inbound: true });
  }
  return { parties };
}

function refusalOf(tag: string, account: AccountDoc | null): PartyRefusal | null {
  if (!account) return { reason: Reasons.NOT_FOUND, account_tag: tag };
  if (account.active === false) return { reason: Reasons.NOT_ACTIVE, account_tag: tag };
  return null;
}
