import type { Collection } from 'mongodb';
import { isDuplicateKeyError } from '../../infra/mongo-errors';
import { DeckError } from './parse';

/**
 * One deck at a time per pricelist and carrier (`rate_deck_leases`). Each rate is written by
 * compare-and-swap on its own, so two different decks run side by side would each win some prefixes:
 * July's prices on one prefix, August's on the next, and both runs reporting success. A run holds the
 * pair's lease while it writes and renews it as it goes; a run that died leaves it to expire.
 */
export interface DeckLeaseDoc {
  /** `<pricelist_tag>/<carrier_tag>`, each URI-encoded. */
  _id: string;
  run: string;
  started_at: Date;
  /** Renewed by every chunk the run reads; past it, another run may take the pair. */
  until: Date;
}

/** How long a lease holds without renewal: longer than one chunk's writes take on a slow day. */
export const DECK_LEASE_MS = 60_000;

const leaseId = (pricelistTag: string, carrierTag: string) => `${encodeURIComponent(pricelistTag)}/${encodeURIComponent(carrierTag)}`;

export class DeckLease {
  private constructor(
    private readonly leases: Collection<DeckLeaseDoc>,
    private readonly id: string,
    private readonly run: string,
  ) {}

  /** Takes the pair's lease, or refuses with who holds it. */
  static async take(leases: Collection<DeckLeaseDoc>, pricelistTag: string, carrierTag: string, run: string): Promise<DeckLease> {
    const id = leaseId(pricelistTag, carrierTag);
    const now = new Date();
    const until = new Date(now.getTime() + DECK_LEASE_MS);
    try {
      await leases.insertOne({ _id: id, run, started_at: now, until });
      return new DeckLease(leases, id, run);
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
    const taken = await leases.findOneAndUpdate({ _id: id, until: { $lt: now } }, { $set: { run, started_at: now, until } });
    if (taken) return new DeckLease(leases, id, run);
    const holder = await leases.findOne({ _id: id });
    // A run that failed or died holds the pair until its lease expires: the message says until when.
    throw new DeckError(
      `carrier_tag: a deck for pricelist ${JSON.stringify(pricelistTag)} and carrier ${JSON.stringify(carrierTag)} is being applied` +
        ` (since ${holder?.started_at.toISOString() ?? 'just now'}; held until ${holder?.until.toISOString() ?? 'a minute from now'} unless it ends sooner):` +
        ' run this one when it is done',
      'BAD_USER_INPUT',
      'carrier_tag',
    );
  }

  /** Renews the lease; throws when another run took it over (this one stalled past DECK_LEASE_MS). */
  async renew(): Promise<void> {
    const renewed = await this.leases.updateOne({ _id: this.id, run: this.run }, { $set: { until: new Date(Date.now() + DECK_LEASE_MS) } });
    if (renewed.matchedCount === 0) throw new Error('the rate deck run lost its lease to another run (it stalled): run it again');
  }

  async release(): Promise<void> {
    await this.leases.deleteOne({ _id: this.id, run: this.run });
  }
}
