import { randomUUID } from 'node:crypto';
import type { Collection, Db, Filter, UpdateFilter } from 'mongodb';
import { applyAt, closeAccount, opIds, settle, type LedgerOp } from '../../shared/domain/ledger';
import type { Config } from '../../shared/infra/config';
import { badInput, ErrorCodes, ServiceError } from '../../shared/infra/errors';
import type { AccountDoc, AccountType } from '../../shared/domain/types';
import { type Collections } from '../../shared/domain/store';
import { isDuplicateKeyError } from '../../shared/infra/mongo-errors';
import { countMatching, exists, findPage, insertNew, type ListWindow, type ReadLimits } from './documents';
import { invalidReference, notFound, rethrowDuplicate } from './errors';
import { allOf, idConditions, matchAny, matchValue, textSearch } from './query';
import type { References } from './references';
import type { TaggedKey } from './tagged-store';
import type { ChangeAnnouncer } from './change-announcer';
import { workUnderWay } from './deletion-checks';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const outsideInt64 = (amount: bigint) => amount < INT64_MIN || amount > INT64_MAX;
/** Two balances that each fit may be further apart than one ledger entry holds (it would be written wrapped). */
const TOO_FAR = 'is further from the current balance than one 64-bit adjustment holds: set it in two steps';

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
  /** react-admin full-text search (textSearch): tag, name, customer, e-mail, tags. */
  q?: string | null;
}

/** Fields the `q` filter searches (the console's search box). */
export const ACCOUNT_SEARCH_PATHS = ['account_tag', 'name', 'customer_tag', 'notification_email', 'tags'] as const;

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
    ...textSearch<AccountDoc>(filter.q, ACCOUNT_SEARCH_PATHS),
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

/** An operator's balance adjustment as adjustBalance receives it (validated). */
export interface Adjustment {
  account_tag: string;
  /** Non-zero; negative takes off. */
  amount: bigint;
  /** Why, kept as the ledger entry's `ref`. */
  reason: string;
  /** The client's idempotency key; null: every call is a new adjustment. */
  key: string | null;
}

/**
 * The first claim of an idempotency key: which adjustment it stands for, kept forever beside its ledger
 * entry (`adjust:key:<key>`). It exists because the ledger entry's unique id alone cannot stop the same
 * key from being applied to two different accounts at once (each compare-and-swap is per account, and
 * the second entry's insert would fail only after its balance changed); the claim's unique `_id` does,
 * before any balance moves. Written first (intent first, src/shared/domain/ledger/index.ts guarantee 5): a
 * claim without its entry is an adjustment a retry with the same key will finish.
 */
interface AdjustmentKeyDoc {
  _id: string;
  account_tag: string;
  /**
   * The account's `_id` (claims made before 2026-11-27 have none): a tag may be given to another customer
   * after a deletion, and that customer's adjustment under a key the old one used is not its replay.
   */
  account_id?: string;
  amount: bigint;
  reason: string;
  at: Date;
}

const sameAdjustment = (
  claim: Pick<AdjustmentKeyDoc, 'account_tag' | 'account_id' | 'amount'>,
  adjustment: Adjustment,
  accountId: string,
) =>
  claim.account_tag === adjustment.account_tag &&
  (claim.account_id === undefined || claim.account_id === accountId) &&
  claim.amount === adjustment.amount;

const keyReused = () => badInput('idempotency_key', 'idempotency_key already used for a different adjustment');

/** The 64-bit room an amount needs: the filter that keeps the balance inside int64 after adding it. */
function roomFor(amount: bigint): Filter<AccountDoc> {
  return { balance: amount >= 0n ? { $lte: INT64_MAX - amount } : { $gte: INT64_MIN - amount } };
}

export class AccountStore {
  private readonly adjustmentKeys: Collection<AdjustmentKeyDoc>;

  constructor(
    private readonly collections: Collections,
    private readonly references: References,
    private readonly config: Pick<Config, 'longCallSeconds'>,
    private readonly reads: ReadLimits,
    db: Db,
    /** Announces changes of what rating reads of an account (workers keep it in memory during imports). */
    private readonly settings: Pick<ChangeAnnouncer, 'announce'>,
  ) {
    this.adjustmentKeys = db.collection<AdjustmentKeyDoc>('adjustment_keys');
  }

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
    // A deleted account's ledger is closed under its id (close.ts): the id is never given out again, or
    // this account's own close would find that one written and leave its balance in the tag's ledger.
    if (await exists(this.collections.ledger, { _id: opIds.close(doc._id) }))
      throw new ServiceError(ErrorCodes.DUPLICATE, 'An account with this id existed and was deleted: ids are not reused', { field: 'id' });
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
    // Refused before anything is written (setBalance checks again against the balance it reads).
    if (outsideInt64(balance - current.balance)) throw badInput('balance', TOO_FAR);
    const updated = await this.updateFields(current, linked, fields);
    return this.setBalance(updated.account_tag, balance, 'updateAccount');
  }

  private async updateFields(
    current: AccountDoc,
    linked: LinkedAccountsRef | undefined,
    fields: Partial<Omit<AccountFields, '_id'>>,
  ): Promise<AccountDoc> {
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
      updated = await this.collections.accounts.findOneAndUpdate(filter, { $set: set, $inc: { rev: 1 } } as UpdateFilter<AccountDoc>, {
        returnDocument: 'after',
      });
    } catch (err) {
      rethrowDuplicate(err, 'account');
    }
    if (!updated) {
      if (renamed && (await exists(this.collections.accounts, { _id: current._id }))) {
        throw invalidReference('account_tag', 'cannot rename an account with running transactions');
      }
      throw notFound('account');
    }
    await this.settings.announce();
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
    // Its balance is the fold of the ledger entries under its tag: renamed, the audit would find it off forever.
    if (await exists(this.collections.ledger, { account_tag: current.account_tag })) {
      throw invalidReference('account_tag', `cannot rename account "${current.account_tag}": its ledger is kept under its tag`);
    }
  }

  /**
   * Adds `amount` (negative to take off) as one ledger adjustment (`adjust:<request id>`), so an audit
   * sees every top-up. The filter keeps the result inside the 64-bit range, which MongoDB would
   * otherwise refuse or wrap.
   */
  async incrementBalance(accountTag: string, amount: bigint, reason = 'incrementAccountBalance'): Promise<AccountDoc> {
    const op = {
      op: opIds.adjust(randomUUID()),
      account_tag: accountTag,
      amount,
      kind: 'adjust' as const,
      transaction_tag: null,
      ref: reason,
    };
    return this.adjust(accountTag, () => op, roomFor(amount), 'amount');
  }

  /**
   * adjustBalance: one ledger 'adjust' entry whose ref is the reason. Without a key it is
   * incrementBalance. With one, the operation id is `adjust:key:<key>` (permanent, like every ledger
   * id), so a client retrying after a lost answer never applies it twice: a replay of the same account
   * and amount answers the account as it is, anything else under the key is refused.
   */
  async adjustBalance(adjustment: Adjustment): Promise<AccountDoc> {
    const { account_tag: accountTag, amount, reason, key } = adjustment;
    if (key === null) return this.incrementBalance(accountTag, amount, reason);
    const account = await this.collections.accounts.findOne({ account_tag: accountTag }, { projection: { _id: 1 } });
    if (!account) throw notFound('account');
    // Checked before the claim, so that an amount refused for the range does not use the key up.
    const inRange = await exists(this.collections.accounts, { account_tag: accountTag, ...roomFor(amount) });
    await this.claimKey(key, adjustment, account._id, inRange);
    await this.applyKeyed({
      op: opIds.adjust(`key:${key}`),
      account_tag: accountTag,
      amount,
      kind: 'adjust',
      transaction_tag: null,
      ref: reason,
    });
    const after = await this.collections.accounts.findOne({ account_tag: accountTag });
    if (!after) throw notFound('account');
    return after;
  }

  /** Claims `key` for this adjustment, or finds it claimed by the same one (a retry); refuses any other. */
  private async claimKey(key: string, adjustment: Adjustment, accountId: string, inRange: boolean): Promise<void> {
    const claimed = await this.adjustmentKeys.findOne({ _id: key });
    if (claimed) {
      if (!sameAdjustment(claimed, adjustment, accountId)) throw keyReused();
      return;
    }
    if (!inRange) throw badInput('amount', 'would take the balance outside the 64-bit integer range');
    try {
      await this.adjustmentKeys.insertOne({
        _id: key,
        account_tag: adjustment.account_tag,
        account_id: accountId,
        amount: adjustment.amount,
        reason: adjustment.reason,
        at: new Date(),
      });
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      // Claimed by a concurrent call in between: fine only if it is the same adjustment.
      const winner = await this.adjustmentKeys.findOne({ _id: key });
      if (!winner || !sameAdjustment(winner, adjustment, accountId)) throw keyReused();
    }
  }

  /**
   * Applies a keyed adjustment at most once, ever (applyOnce's reasoning, with the 64-bit guard): the
   * account is read, then the ledger; if neither holds the operation it was not applied at the
   * `ledger_rev` read, and the write is a compare-and-swap on that `ledger_rev`. Any concurrent
   * application of the same key bumps it, so this one misses, reads again and finds it applied.
   */
  private async applyKeyed(op: LedgerOp): Promise<void> {
    for (let attempt = 0; attempt < 200; attempt++) {
      const state = await this.collections.accounts.findOne(
        { account_tag: op.account_tag },
        { projection: { _id: 0, ledger_rev: 1, ledger_pending: 1 } },
      );
      if (!state) throw notFound('account');
      const marker = state.ledger_pending?.find((m) => m.op === op.op);
      if (marker) return settle(this.collections, op.account_tag, marker);
      if (await this.collections.ledger.findOne({ _id: op.op, account_tag: op.account_tag }, { projection: { _id: 1 } })) return;
      if (await applyAt(this.collections, op, state.ledger_rev ?? null, roomFor(op.amount))) return;
      if (!(await exists(this.collections.accounts, { account_tag: op.account_tag, ...roomFor(op.amount) }))) {
        throw badInput('amount', 'would take the balance outside the 64-bit integer range');
      }
      if (attempt > 2) await new Promise((resolve) => setTimeout(resolve, Math.min(attempt, 20)));
    }
    throw new Error(`balance of ${op.account_tag} kept changing; adjustment ${op.op} not applied yet (retry)`);
  }

  /** Sets the balance to `target` through the ledger: an adjustment by the difference from the balance read. */
  private async setBalance(accountTag: string, target: bigint, reason: string): Promise<AccountDoc> {
    const id = opIds.adjust(randomUUID());
    return this.adjust(accountTag, (balance) => ({
      op: id,
      account_tag: accountTag,
      amount: target - balance,
      kind: 'adjust' as const,
      transaction_tag: null,
      ref: reason,
    }));
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
      if (outsideInt64(op.amount)) throw badInput(field, TOO_FAR);
      const updated = await applyAt(this.collections, op, current.ledger_rev ?? null, guard);
      if (updated) return (await this.collections.accounts.findOne({ account_tag: accountTag })) ?? updated;
      if (!(await exists(this.collections.accounts, { account_tag: accountTag, ...guard }))) {
        throw badInput(field, 'would take the balance outside the 64-bit integer range');
      }
    }
    throw new Error(`balance of ${accountTag} kept changing; not adjusted`);
  }

  /** Refused while other accounts link it, calls are running on it or work on its money is under way; its records stay. */
  async delete(key: TaggedKey): Promise<AccountDoc> {
    const current = await this.find(key);
    if (!current) throw notFound('account');
    await this.references.refuseAccountLinked('account_tag', current.account_tag, 'delete');
    const underWay = await workUnderWay(this.collections, current.account_tag);
    if (underWay)
      throw invalidReference('account_tag', `cannot delete account "${current.account_tag}" yet: ${underWay}; try again shortly`);
    // Filtered on having no running entry, so a call that begins meanwhile is never orphaned.
    const deleted = await this.collections.accounts.findOneAndDelete({ _id: current._id, ...NOT_RUNNING });
    if (deleted) {
      // Announced first: import workers holding the account stop using it now, not after the close's
      // pass over its records.
      await this.settings.announce();
      // Its ledger and records stay; the ledger is closed so that the tag's next account starts clean.
      await closeAccount(this.collections, deleted);
      return deleted;
    }
    if (await exists(this.collections.accounts, { _id: current._id })) {
      throw invalidReference('account_tag', `cannot delete account "${current.account_tag}" while it has running transactions`);
    }
    throw notFound('account');
  }
}
