import type { AccountDoc, TransactionDoc } from '../../shared/domain/types';
import { groupFindOne } from '../../shared/infra/group-commands';
import type { Collections } from '../../shared/domain/store';
import { Reasons } from '../../shared/domain/calls';

export interface Party {
  account: AccountDoc;
  /** The receiving side of an inbound call. */
  inbound: boolean;
}

export type PartyRefusal = { reason: typeof Reasons.NOT_FOUND | typeof Reasons.NOT_ACTIVE; account_tag: string };

/** For begin: the caller's record of this tag, read with the caller (see readWithRecord). */
export interface RecordLookup {
  transactions: Collections['transactions'];
  transaction_tag: string;
}

/**
 * The caller's account and, in the same command, its record of the call `transactionTag` if one exists
 * (begin refuses a tag already recorded): one round trip instead of two (issue 36). The sub-pipeline
 * has no variables, so MongoDB runs it once, on the records' unique index (account, tag, caller).
 */
async function readWithRecord(
  accounts: Collections['accounts'],
  accountTag: string,
  lookup: RecordLookup,
): Promise<{ account: AccountDoc | null; recorded: TransactionDoc | null }> {
  const [doc] = await accounts
    .aggregate<AccountDoc & { recorded_call: TransactionDoc[] }>([
      { $match: { account_tag: accountTag } },
      { $limit: 1 },
      {
        $lookup: {
          from: lookup.transactions.collectionName,
          pipeline: [
            { $match: { account_tag: accountTag, transaction_tag: lookup.transaction_tag, origin_account_tag: accountTag } },
            { $limit: 1 },
          ],
          as: 'recorded_call',
        },
      },
    ])
    .toArray();
  if (!doc) return { account: null, recorded: null };
  const { recorded_call: recorded, ...account } = doc;
  return { account: account as AccountDoc, recorded: recorded[0] ?? null };
}

/**
 * The accounts a call touches (with `recordLookup`, also the caller's record of that tag, `recorded`): the caller, its linked (parent, reseller) accounts transitively, and the
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
  recordLookup?: RecordLookup,
): Promise<{ parties: Party[]; recorded?: TransactionDoc | null } | { refusal: PartyRefusal }> {
  const parties: Party[] = [];
  const seen = new Set<string>();
  let recorded: TransactionDoc | null = null;
  const read = async (tag: string) => {
    if (!recordLookup || tag !== accountTag) return groupFindOne(accounts, 'account_tag', tag);
    const found = await readWithRecord(accounts, tag, recordLookup);
    recorded = found.recorded;
    return found.account;
  };
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
  return recordLookup ? { parties, recorded } : { parties };
}

function refusalOf(tag: string, account: AccountDoc | null): PartyRefusal | null {
  if (!account) return { reason: Reasons.NOT_FOUND, account_tag: tag };
  if (account.active === false) return { reason: Reasons.NOT_ACTIVE, account_tag: tag };
  return null;
}
