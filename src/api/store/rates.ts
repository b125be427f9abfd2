import type { Collection, Filter } from 'mongodb';
import { badInput } from '../../shared/infra/errors';
import type { PricelistRateDoc, RateTiming } from '../../shared/domain/types';
import { timingKey } from '../../shared/domain/rating';
import { casFilter } from '../../shared/domain/rate-decks';
import type { Collections } from '../../shared/domain/store';
import { countMatching, exists, findPage, insertNew, type ListWindow, type ReadLimits } from './documents';
import { invalidReference, notFound, rethrowDuplicate } from './errors';
import { allOf, idConditions, matchAny, oneOrMany, textSearch } from './query';
import type { ChangeAnnouncer } from './change-announcer';

/** The pricelist or carrier of a rate, named by tag or by id (both: they must agree). */
export interface TagRef {
  tag?: string;
  id?: string;
}

/** A rate is named by id, or by its pricelist, carrier and prefix (its unique key). */
export type RateKey = { id: string } | { pricelist: TagRef; carrier: TagRef; prefix: string };

/** What the API writes: a rate's current version. Earlier versions are written only by rate decks (src/shared/domain/rate-decks). */
type RateFields = Omit<PricelistRateDoc, 'pricelist_tag' | 'carrier_tag' | 'previous_versions'>;

/** A new rate before its pricelist and carrier are resolved to tags. */
export type RateDraft = RateFields & { pricelist: TagRef; carrier: TagRef };

export type RatePatch = Partial<Omit<RateFields, '_id'>> & { pricelist?: TagRef; carrier?: TagRef };

export interface RateFilter {
  id?: string | null;
  ids?: string[] | null;
  pricelist_id?: string[] | null;
  pricelist_tag?: string[] | null;
  carrier_id?: string[] | null;
  carrier_tag?: string[] | null;
  prefix?: string[] | null;
  /** react-admin's full-text search: prefix, description or carrier_tag contains it (any case). */
  q?: string | null;
}

/** datetime_end must come after datetime_start when both are set. */
export function checkValidityWindow(rate: Pick<PricelistRateDoc, 'datetime_start' | 'datetime_end'>): void {
  if (rate.datetime_start && rate.datetime_end && rate.datetime_end.getTime() <= rate.datetime_start.getTime()) {
    throw badInput('datetime_end', 'must be after datetime_start');
  }
}

/**
 * A rate with earlier versions (a rate deck replaced it) keeps its current version after them: its
 * start may not move before the end of the latest earlier version, or two versions would overlap.
 */
export function checkAfterPreviousVersions(rate: Pick<PricelistRateDoc, 'datetime_start' | 'previous_versions'>): void {
  const previous = rate.previous_versions ?? [];
  const last = previous[previous.length - 1];
  if (!last?.datetime_end) return;
  if (!rate.datetime_start || rate.datetime_start.getTime() < last.datetime_end.getTime()) {
    throw badInput('datetime_start', `must not be before ${last.datetime_end.toISOString()}, the end of the rate's previous version`);
  }
}

type Side = 'pricelist' | 'carrier';

/** The stored fields of a timing: the timing and its key, or nothing for none. */
function timingFields(timing: RateTiming | null | undefined): Pick<PricelistRateDoc, 'timing' | 'timing_key'> {
  if (!timing) return {};
  return { timing, timing_key: timingKey(timing)! };
}

/** What rates need of a pricelist or carrier: its id and its tag. */
type TaggedTarget = { _id: string } & Record<string, unknown>;

export class RateStore {
  constructor(
    private readonly collections: Collections,
    private readonly ratingData: ChangeAnnouncer,
    private readonly reads: ReadLimits,
  ) {}

  /** The pricelists or carriers collection, seen generically: both are `_id` plus a unique tag. */
  private targets(side: Side): Collection<TaggedTarget> {
    return (side === 'pricelist' ? this.collections.pricelists : this.collections.carriers) as unknown as Collection<TaggedTarget>;
  }

  /** The tag a reference names, or null when no such pricelist/carrier exists. */
  private async tagOf(side: Side, ref: TagRef): Promise<string | null> {
    const tagField = `${side}_tag`;
    if (ref.id === undefined) {
      if (ref.tag === undefined) return null;
      return (await exists(this.targets(side), { [tagField]: ref.tag })) ? ref.tag : null;
    }
    const doc = await this.targets(side).findOne({ _id: ref.id });
    if (!doc) return null;
    const tag = doc[tagField] as string;
    if (ref.tag !== undefined && ref.tag !== tag) throw badInput(tagField, `names a different ${side} than ${side}_id`);
    return tag;
  }

  /** Like tagOf, for a reference being written: a missing target is INVALID_REFERENCE. */
  private async requireTag(side: Side, ref: TagRef): Promise<string> {
    const tag = await this.tagOf(side, ref);
    if (tag === null) {
      const field = ref.id !== undefined ? `${side}_id` : `${side}_tag`;
      throw invalidReference(field, `no ${side} ${JSON.stringify(ref.id ?? ref.tag)}`);
    }
    return tag;
  }

  private async keyQuery(key: RateKey): Promise<Filter<PricelistRateDoc> | null> {
    if ('id' in key) return { _id: key.id };
    const [pricelistTag, carrierTag] = await Promise.all([this.tagOf('pricelist', key.pricelist), this.tagOf('carrier', key.carrier)]);
    if (pricelistTag === null || carrierTag === null) return null;
    // The key names the rate without a timing (timing_key absent); a timed rate is named by id.
    return { pricelist_tag: pricelistTag, carrier_tag: carrierTag, prefix: key.prefix, timing_key: { $exists: false } };
  }

  /** Filter members `pricelist_id` / `carrier_id` become conditions on the tags they name. */
  private async idsToTags(side: Side, ids: string[] | null | undefined): Promise<Array<Filter<PricelistRateDoc>>> {
    const wanted = oneOrMany(ids);
    if (wanted === undefined) return [];
    const tags = await this.targets(side).distinct(`${side}_tag`, { _id: { $in: wanted } });
    return [{ [`${side}_tag`]: { $in: tags } }];
  }

  private async query(filter: RateFilter): Promise<Filter<PricelistRateDoc>> {
    return allOf<PricelistRateDoc>([
      ...idConditions<PricelistRateDoc>(filter),
      ...matchAny<PricelistRateDoc>('pricelist_tag', filter.pricelist_tag),
      ...matchAny<PricelistRateDoc>('carrier_tag', filter.carrier_tag),
      ...matchAny<PricelistRateDoc>('prefix', filter.prefix),
      ...textSearch<PricelistRateDoc>(filter.q, ['prefix', 'description', 'carrier_tag']),
      ...(await this.idsToTags('pricelist', filter.pricelist_id)),
      ...(await this.idsToTags('carrier', filter.carrier_id)),
    ]);
  }

  async find(key: RateKey): Promise<PricelistRateDoc | null> {
    const query = await this.keyQuery(key);
    return query ? this.collections.rates.findOne(query) : null;
  }

  async list(filter: RateFilter, window: ListWindow): Promise<PricelistRateDoc[]> {
    return findPage(this.collections.rates, await this.query(filter), window, this.reads);
  }

  async count(filter: RateFilter): Promise<number> {
    return countMatching(this.collections.rates, await this.query(filter), this.reads);
  }

  async create(draft: RateDraft): Promise<PricelistRateDoc> {
    const { pricelist, carrier, ...fields } = draft;
    checkValidityWindow(fields);
    const [pricelistTag, carrierTag] = await Promise.all([this.requireTag('pricelist', pricelist), this.requireTag('carrier', carrier)]);
    const { timing, ...terms } = fields;
    // A rate without a timing is stored as before timings (neither field), so its key stays null.
    const doc: PricelistRateDoc = { ...terms, ...timingFields(timing), pricelist_tag: pricelistTag, carrier_tag: carrierTag };
    await insertNew(this.collections.rates, doc, 'pricelist rate');
    await this.ratingData.announce();
    return doc;
  }

  async update(key: RateKey, patch: RatePatch): Promise<PricelistRateDoc> {
    const current = await this.find(key);
    if (!current) throw notFound('pricelist rate');
    const { pricelist, carrier, timing, ...fields } = patch;
    const changes: Partial<PricelistRateDoc> = { ...fields };
    const clearTiming = timing === null && current.timing_key !== undefined;
    if (timing) Object.assign(changes, timingFields(timing));
    if (pricelist) changes.pricelist_tag = await this.requireTag('pricelist', pricelist);
    if (carrier) changes.carrier_tag = await this.requireTag('carrier', carrier);
    checkValidityWindow({ ...current, ...changes });
    if ('datetime_start' in changes) checkAfterPreviousVersions({ ...current, ...changes });
    if (Object.keys(changes).length === 0 && !clearTiming) return current;
    let updated: PricelistRateDoc | null;
    try {
      // As read (compare-and-swap): a rate deck may have given the rate a new version meanwhile, and an
      // edit meant for the version read must not land on the deck's (src/shared/domain/rate-decks).
      const filter = casFilter(current);
      const update = {
        ...(Object.keys(changes).length > 0 ? { $set: changes } : {}),
        ...(clearTiming ? { $unset: { timing: '' as const, timing_key: '' as const } } : {}),
      };
      updated = await this.collections.rates.findOneAndUpdate(filter, update, { returnDocument: 'after' });
    } catch (err) {
      rethrowDuplicate(err, 'pricelist rate');
    }
    if (!updated) {
      if (await exists(this.collections.rates, { _id: current._id }))
        throw badInput('id', 'the rate changed since it was read (a rate deck or another edit): read it again and repeat the change');
      throw notFound('pricelist rate');
    }
    await this.ratingData.announce();
    return updated;
  }

  /** Deletes the rate with every version it has. */
  async delete(key: RateKey): Promise<PricelistRateDoc> {
    const current = await this.find(key);
    if (!current) throw notFound('pricelist rate');
    const deleted = await this.collections.rates.findOneAndDelete({ _id: current._id });
    if (!deleted) throw notFound('pricelist rate');
    await this.ratingData.announce();
    return deleted;
  }
}
