import { randomUUID } from 'node:crypto';
import type { Filter, UpdateFilter } from 'mongodb';
import { applyAt, opIds } from '../../shared/ledger';
import type { Config } from '../../shared/config';
import { badInput } from '../../shared/errors';
import type { AccountDoc, AccountType } from '../../shared/domain/types';
import type { Collections } from '../../shared/mongo';
import { countMatching, exists, findPage, insertNew, type ListWindow, type ReadLimits } from './documents';
import { invalidReference, notFound, rethrowDuplicate } from './errors';
import { allOf, idConditions, matchAny, matchValue } from './query';
import type { References } from './references';
import type { TaggedKey } from './tagged-store';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Parent accounts, named by tag (`linked_accounts`) or by id (`linked_accountsIds`, react-admin). */
export type LinkedAccountsRef = { tags: string[] } | { ids: string[] };

/** The fields operators set; running entries, operation markers and `rev` belong to the engine. */
export type AccountFields = Omit<AccountDoc, 'linked_accounts' | 'running_transactions' | 'ledger_pending' | 'ledger_rev' | 'rev'>;

export type AccountDraft = AccountFields & { linked: LinkedAccountsRef };

export type AccountPatch = Partial<Omit<AccountFields, '_id'>> & { linked?: LinkedAccountsRef };

export interface AccountFilter {
  id?: string | null;
  ids?: string[] | null;
  account_tag?: string[] | null;
  customer_tag?: string[] | null;
  type?: AccountType | null;
  active?: boolean | null;
  with_running_transactions?: boolean | null;
  with_long_running_transactions?: boolean | null;
}

/** Accounts with at least one running entry (in progress or ended awaiting processing). */
const RUNNING: Filter<AccountDoc> = { 'running_transactions.0': { $exists: true } };
const NOT_RUNNING: Filter<AccountDoc> = { 'running_transactions.0': { $exists: false } };

/** Accounts with a call still in progress that began before `cutoff`. */
function longRunning(cutoff: Date): Filter<AccountDoc> {
  return { running_transactions: { $elemMatch: { in_progress: true, timestamp_begin: { $lt: cutoff } } } };
}

export function accountQuery(filter: AccountFilter, longCallCutoff: Date): Filter<AccountDoc> {
  const conditions: Array<Filter<AccountDoc>> = [
    ...idConditions<AccountDoc>(filter),
    ...matchAny<AccountDoc>('account_tag', filter.account_tag),
    ...matchAny<AccountDoc>('customer_tag', filter.customer_tag),
    ...matchValue<AccountDoc>('type', filter.type),
    ...matchValue<AccountDoc>('active', filter.active),
  ];
  if (filter.with_running_transactions === true) conditions.push(RUNNING);
  if (filter.with_running_transactions === false) conditions.push(NOT_RUNNING);
  if (filter.with_long_running_transactions === true) conditions.push(longRunning(longCallCutoff));
  if (filter.with_long_running_transactions === false) conditions.push({ $nor: [longRunning(longCallCutoff)] });
  return allOf(conditions);
}

function keyQuery(key: TaggedKey): Filter<AccountDoc> {
  return allOf<AccountDoc>([...matchValue<AccountDoc>('_id', key.id), ...matchValue<AccountDoc>('account_tag', key.tag)]);
}

export class AccountStore {
  constructor(
    private readonly collections: Collections,
    private readonly references: References,
    private readonly config: Pick<Config, 'longCallSeconds'>,
    private readonly reads: ReadLimits,
  ) {}

  private query(filter: AccountFilter): Filter<AccountDoc> {
    return accountQuery(filter, new Date(Date.now() - this.config.longCallSeconds * 1000));
  }

  async find(key: TaggedKey): Promise<AccountDoc | null> {
    if (key.id === undefined && key.tag === undefined) return null;
    return this.collections.accounts.findOne(keyQuery(key));
  }

  /** Accounts by tag, in the order given; tags without an account are left out. */
  async findByTags(tags: readonly string[]): Promise<AccountDoc[]> {
    if (tags.length === 0) return [];
    const docs = await this.collections.accounts.find({ account_tag: { $in: [...tags] } }).toArray();
    const byTag = new Map(docs.map((d) => [d.account_tag, d] as const));
    return tags.flatMap((t) => byTag.get(t) ?? []);
  }

  list(filter: AccountFilter, window: ListWindow): Promise<AccountDoc[]> {
    return findPage(this.collections.accounts, this.query(filter), window, this.reads);
  }

  count(filter: AccountFilter): Promise<number> {
    return countMatching(this.collections.accounts, this.query(filter), this.reads);
  }

  /**
   * Tags of the parent accounts a write names: each must exist and none may be the account itself
   * (under its current or new tag) or have it among its own ancestors.
   */
  private async linkedTags(ref: LinkedAccountsRef, selfTags: readonly string[]): Promise<string[]> {
    const field = 'tags' in ref ? 'linked_accounts' : 'linked_accountsIds';
    let tags: string[];
    if ('tags' in ref) {
      tags = ref.tags;
    } else {
      const docs = await this.collections.accounts.find({ _id: { $in: ref.ids } }, { projection: { account_tag: 1 } }).toArray();
      const tagById = new Map(docs.map((d) => [d._id, d.account_tag] as const));
      const missing = ref.ids.filter((id) => !tagById.has(id));
      if (missing.length > 0) throw invalidReference(field, `no account with id ${missing.map((m) => `"${m}"`).join(', ')}`);
      tags = ref.ids.map((id) => tagById.get(id) as string);
    }
    if (tags.some((t) => selfTags.includes(t))) throw invalidReference(field, 'an account cannot link itself');
    await this.references.requireAccounts(field, tags);
    for (const self of selfTags) await this.references.refuseLinkCycle(field, self, tags);
    return tags;
  }

  /** Pricelists and carriers the account names must exist. */
  private async checkTagReferences(fields: AccountPatch): Promise<void> {
    if (fields.pricelist_tags) await this.references.requirePricelists('pricelist_tags', fields.pricelist_tags);
    if (fields.carrier_tags) await this.references.requireCarriers('carrier_tags', fields.carrier_tags);
    if (fields.carrier_tags_override) await this.references.requireCarriers('carrier_tags_override', fields.carrier_tags_override);
  }

  async create(draft: AccountDraft): Promise<AccountDoc> {
    const { linked, ...fields } = draft;
    const links = await this.linkedTags(linked, [fields.account_tag]);
    await this.checkTagReferences(fields);
    // The opening balance is where the account's ledger starts (rating audit folds the ledger onto it).
    const doc: AccountDoc = { ...fields, opening_balance: fields.balance, linked_accounts: links, running_transactions: [] };
    await insertNew(this.collections.accounts, doc, 'account');
    return doc;
  }

  /**
   * Renaming is refused while anything refers to the account by tag (linking accounts, running
   * entries, transaction records). Every update bumps `rev`, which the engine's prepaid checks
   * are conditional on, so a balance or type change can never slip between a check and a begin.
   */
  async update(key: TaggedKey, patch: AccountPatch): Promise<AccountDoc> {
    const current = await this.find(key);
    if (!current) throw notFound('account');
    const { linked, balance, ...fields } = patch;
    // A new balance is a ledger adjustment by the difference, made after the other fields.
    if (balance === undefined) return this.updateFields(current, linked, fields);
    const updated = await this.updateFields(current, linked, fields);
    return this.setBalance(updated.account_tag, balance, 'updateAccount');
  }

  private async updateFields(current: AccountDoc, linked: LinkedAccountsRef | undefined, fields: Partial<Omit<AccountFields, '_id'>>): Promise<AccountDoc> {
    if (Object.keys(fields).length === 0 && !linked) return current;
    const renamed = fields.account_tag !== undefined && fields.account_tag !== current.account_tag;
    const filter: Filter<AccountDoc> = { _id: current._id, account_tag: current.account_tag };
    if (renamed) {
      await this.refuseRename(current);
      Object.assign(filter, NOT_RUNNING);
    }
    const selfTags = renamed ? [current.account_tag, fields.account_tag as string] : [current.account_tag];
    const links = linked ? await this.linkedTags(linked, selfTags) : undefined;
    await this.checkTagReferences(fields);
    const set: Partial<AccountDoc> = { ...fields, ...(links ? { linked_accounts: links } : {}) };
    let updated: AccountDoc | null;
    try {
      updated = await this.collections.accounts.findOneAndUpdate(
        filter,
        { $set: set, $inc: { rev: 1 } } as UpdateFilter<AccountDoc>,
        { returnDocument: 'after' },
      );
    } catch (err) {
      rethrowDuplicate(err, 'account');
    }
    if (!updated) {
      if (renamed && (await exists(this.collections.accounts, { _id: current._id }))) {
        throw invalidReference('account_tag', 'cannot rename an account with running transactions');
      }
      throw notFound('account');
    }
    return updated;
  }

  private async refuseRename(current: AccountDoc): Promise<void> {
    await this.references.refuseAccountLinked('account_tag', current.account_tag, 'rename');
    if ((current.running_transactions ?? []).length > 0) {
      throw invalidReference('account_tag', 'cannot rename an account with running transactions');
    }
    if (await exists(this.collections.transactions, { account_tag: current.account_tag })) {
      throw invalidReference('account_tag', `cannot rename account "${current.account_tag}": transactions are recorded under its tag`);
    }
  }

  /**
   * Adds `amount` (negative to take off) as one ledger adjustment (`adjust:<request id>`), so an audit
   * sees every top-up. The filter keeps the result inside the 64-bit range, which MongoDB would
   * otherwise refuse or wrap.
   */
  async incrementBalance(accountTag: string, amount: bigint, reason = 'incrementAccountBalance'): Promise<AccountDoc> {
    const room = amount >= 0n ? { $lte: INT64_MAX - amount } : { $gte: INT64_MIN - amount };
    const op = { op: opIds.adjust(randomUUID()), account_tag: accountTag, amount, kind: 'adjust' as const, transaction_tag: null, ref: reason };
    return this.adjust(accountTag, () => op, { balance: room }, 'amount');
  }

  /** Sets the balance to `target` through the ledger: an adjustment by the difference from the balance read. */
  private async setBalance(accountTag: string, target: bigint, reason: string): Promise<AccountDoc> {
    const id = opIds.adjust(randomUUID());
    return this.adjust(accountTag, (balance) => ({ op: id, account_tag: accountTag, amount: target - balance, kind: 'adjust' as const, transaction_tag: null, ref: reason }));
  }

  /**
   * One adjustment, compare-and-swap on the account's ledger revision: the operation id is new, so it
   * was not applied at the revision read; a miss means another balance change came first (read again).
   */
  private async adjust(
    accountTag: string,
    opFor: (balance: bigint) => Parameters<typeof applyAt>[1],
    guard: Filter<AccountDoc> = {},
    field = 'balance',
  ): Promise<AccountDoc> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const current = await this.collections.accounts.findOne({ account_tag: accountTag }, { projection: { balance: 1, ledger_rev: 1 } });
      if (!current) throw notFound('account');
      const op = opFor(current.balance);
      if (op.amount === 0n) return (await this.collections.accounts.findOne({ account_tag: accountTag }))!;
      const updated = await applyAt(this.collections, op, current.ledger_rev ?? null, guard);
      if (updated) return (await this.collections.accounts.findOne({ account_tag: accountTag })) ?? updated;
      if (!(await exists(this.collections.accounts, { account_tag: accountTag, ...guard }))) {
        throw badInput(field, 'would take the balance outside the 64-bit integer range');
      }
    }
    throw new Error(`balance of ${accountTag} kept changing; not adjusted`);
  }

  /** Refused while other accounts link it or calls are running on it; its records stay. */
  async delete(key: TaggedKey): Promise<AccountDoc> {
    const current = await this.find(key);
    if (!current) throw notFound('account');
    await this.references.refuseAccountLinked('account_tag', current.account_tag, 'delete');
    // Filtered on having no running entry, so a call that begins meanwhile is never orphaned.
    const deleted = await this.collections.accounts.findOneAndDelete({ _id: current._id, ...NOT_RUNNING });
    if (deleted) return deleted;
    if (await exists(this.collections.accounts, { _id: current._id })) {
      throw invalidReference('account_tag', `cannot delete account "${current.account_tag}" while it has running transactions`);
    }
    throw notFound('account');
  }
}
