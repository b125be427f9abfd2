import type { Filter } from 'mongodb';
import type { AccountDoc } from '../../shared/domain/types';
import type { Collections } from '../../shared/domain/store';
import { exists } from './documents';
import { invalidReference } from './errors';

/**
 * Who refers to what, across collections: a carrier is used by rates and by accounts' preferred
 * or forced carriers, a pricelist by rates and accounts, an account by the accounts linking it.
 * These lookups are not keyed by a unique index; that is acceptable in the management API, which
 * is not on the call path.
 */
export class References {
  constructor(private readonly collections: Collections) {}

  /** Tags among `tags` that no record has. */
  private async missing(
    collection: 'carriers' | 'pricelists' | 'accounts',
    path: 'carrier_tag' | 'pricelist_tag' | 'account_tag',
    tags: readonly string[],
  ): Promise<string[]> {
    if (tags.length === 0) return [];
    const found = await this.collections[collection].distinct(path, { [path]: { $in: [...tags] } });
    const present = new Set(found as string[]);
    return tags.filter((t) => !present.has(t));
  }

  async requireCarriers(field: string, tags: readonly string[]): Promise<void> {
    const missing = await this.missing('carriers', 'carrier_tag', tags);
    if (missing.length > 0) throw invalidReference(field, `no carrier ${quoteList(missing)}`);
  }

  async requirePricelists(field: string, tags: readonly string[]): Promise<void> {
    const missing = await this.missing('pricelists', 'pricelist_tag', tags);
    if (missing.length > 0) throw invalidReference(field, `no pricelist ${quoteList(missing)}`);
  }

  async requireAccounts(field: string, tags: readonly string[]): Promise<void> {
    const missing = await this.missing('accounts', 'account_tag', tags);
    if (missing.length > 0) throw invalidReference(field, `no account ${quoteList(missing)}`);
  }

  /** Refuses when rates or accounts still use the carrier. */
  async refuseCarrierInUse(field: string, carrierTag: string, change: string): Promise<void> {
    const { rates, accounts } = this.collections;
    if (await exists(rates, { carrier_tag: carrierTag })) {
      throw invalidReference(field, `cannot ${change} carrier "${carrierTag}": pricelist rates still route to it`);
    }
    const byAccounts: Filter<AccountDoc> = { $or: [{ carrier_tags: carrierTag }, { carrier_tags_override: carrierTag }] };
    if (await exists(accounts, byAccounts)) {
      throw invalidReference(
        field,
        `cannot ${change} carrier "${carrierTag}": accounts still list it in carrier_tags or carrier_tags_override`,
      );
    }
  }

  /** Refuses when rates or accounts still use the pricelist. */
  async refusePricelistInUse(field: string, pricelistTag: string, change: string): Promise<void> {
    const { rates, accounts } = this.collections;
    if (await exists(rates, { pricelist_tag: pricelistTag })) {
      throw invalidReference(field, `cannot ${change} pricelist "${pricelistTag}": it still has rates`);
    }
    if (await exists(accounts, { pricelist_tags: pricelistTag })) {
      throw invalidReference(field, `cannot ${change} pricelist "${pricelistTag}": accounts still list it in pricelist_tags`);
    }
  }

  /** Refuses when other accounts link the account as a parent. */
  async refuseAccountLinked(field: string, accountTag: string, change: string): Promise<void> {
    if (await exists(this.collections.accounts, { linked_accounts: accountTag })) {
      throw invalidReference(field, `cannot ${change} account "${accountTag}": other accounts link it in linked_accounts`);
    }
  }

  /**
   * Refuses links that would make an account its own ancestor: `accountTag` may link `links` only
   * if none of them reaches `accountTag` by following linked_accounts.
   */
  async refuseLinkCycle(field: string, accountTag: string, links: readonly string[]): Promise<void> {
    if (links.includes(accountTag)) throw invalidReference(field, 'an account cannot link itself');
    const seen = new Set<string>(links);
    let frontier = [...links];
    while (frontier.length > 0) {
      const parents = await this.collections.accounts
        .find({ account_tag: { $in: frontier } }, { projection: { linked_accounts: 1 } })
        .toArray();
      const next: string[] = [];
      for (const parent of parents) {
        for (const tag of parent.linked_accounts ?? []) {
          if (tag === accountTag) {
            throw invalidReference(field, `linking would create a cycle: "${accountTag}" is already an ancestor of a linked account`);
          }
          if (!seen.has(tag)) {
            seen.add(tag);
            next.push(tag);
          }
        }
      }
      frontier = next;
    }
  }
}

function quoteList(tags: readonly string[]): string {
  return tags.map((t) => `"${t}"`).join(', ');
}
