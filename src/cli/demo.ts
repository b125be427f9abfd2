/**
 * `rating demo`: creates the demo carrier, pricelist, rates and accounts that the sample call records
 * (examples/calls.csv) are rated against, through the management API's own stores and input rules
 * (the same checks, defaults and change announcements as the createX mutations). What exists already
 * (by tag, or a rate by pricelist, carrier and prefix) is left as it is, so running it again changes nothing.
 */
import pino from 'pino';
import { readAccountCreate } from '../api/graphql/accounts/input';
import { readCarrierCreate } from '../api/graphql/carriers/input';
import { readPricelistCreate } from '../api/graphql/pricelists/input';
import { readRateCreate } from '../api/graphql/rates/input';
import { AccountStore } from '../api/store/accounts';
import { carrierStore } from '../api/store/carriers';
import { ChangeAnnouncer } from '../api/store/change-announcer';
import { pricelistStore } from '../api/store/pricelists';
import { RateStore } from '../api/store/rates';
import { References } from '../api/store/references';
import { createContext } from '../shared/domain/context';
import { reportFailure as reportCliFailure, UsageError } from './failure';
import { commandConfig, serviceServers } from './servers';

export const USAGE = `usage: rating demo
  Creates the demo setup the sample call records (examples/calls.csv) are rated against: carrier
  demo-carrier, pricelist demo (USD, per-minute rates for 1, 44, 447, 49, 39 and 393) and accounts
  demo-alice (prepaid, balance 5000) and demo-bob (postpaid). Records that exist already are left as
  they are. Amounts are minor units (cents).
Talks to the service's servers: MONGO_URL and REDIS_URL or REDIS_CLUSTER_NODES (and MONGO_DB, QUEUE_PREFIX)
as the service uses, else those of a running \`npm start\` with the same DATA_DIR.
Exit status: 0 done, 2 it could not run (run it again).`;

/** The demo setup, as the createX mutations' arguments (amounts in minor units, bigint as GraphQL's BigInt scalar gives them). */
export const DEMO = {
  carriers: [{ carrier_tag: 'demo-carrier', host: '192.0.2.10', port: 5060, protocol: 'UDP' }],
  pricelists: [{ pricelist_tag: 'demo', name: 'Demo retail (per minute)', currency: 'USD' }],
  rates: [
    { prefix: '1', rate: 1, description: 'United States and Canada' },
    { prefix: '44', rate: 2, description: 'United Kingdom' },
    { prefix: '447', rate: 9, description: 'United Kingdom mobile' },
    { prefix: '49', rate: 2, description: 'Germany' },
    { prefix: '39', rate: 2, description: 'Italy' },
    { prefix: '393', rate: 8, description: 'Italy mobile' },
  ].map((r) => ({ ...r, pricelist_tag: 'demo', carrier_tag: 'demo-carrier', connect_fee: 0, rate_increment: 60, interval_start: 0 })),
  accounts: [
    { account_tag: 'demo-alice', name: 'Alice (demo, prepaid)', type: 'PREPAID', balance: 5000n, pricelist_tags: ['demo'] },
    { account_tag: 'demo-bob', name: 'Bob (demo, postpaid)', type: 'POSTPAID', balance: 0n, pricelist_tags: ['demo'] },
  ],
};

interface Tally {
  created: number;
  existing: number;
}

async function ensure<T>(
  items: readonly T[],
  exists: (item: T) => Promise<boolean>,
  create: (item: T) => Promise<unknown>,
): Promise<Tally> {
  const tally: Tally = { created: 0, existing: 0 };
  // One at a time, in order: rates need their pricelist and carrier, accounts their pricelists.
  for (const item of items) {
    if (await exists(item)) {
      tally.existing += 1;
    } else {
      await create(item);
      tally.created += 1;
    }
  }
  return tally;
}

async function demo(): Promise<number> {
  const config = await commandConfig({ redis: true });
  if (!config) return 2;
  const logger = pino({ name: 'demo', level: config.logLevel }, pino.destination(2));
  const ctx = await createContext(config, serviceServers(config), logger);
  try {
    const collections = ctx.mongo.collections;
    const references = new References(collections);
    const ratingData = new ChangeAnnouncer(ctx, 'rating-data');
    const reads = { maxTimeMS: config.mongoMaxTimeMs };
    const carriers = carrierStore(collections, references, ratingData, reads);
    const pricelists = pricelistStore(collections, references, ratingData, reads);
    const rates = new RateStore(collections, ratingData, reads);
    const accounts = new AccountStore(collections, references, config, reads, ctx.mongo.db, new ChangeAnnouncer(ctx, 'account-settings'));

    const counts = {
      carriers: await ensure(
        DEMO.carriers,
        async (c) => (await carriers.find({ tag: c.carrier_tag })) !== null,
        (c) => carriers.create(readCarrierCreate(c)),
      ),
      pricelists: await ensure(
        DEMO.pricelists,
        async (p) => (await pricelists.find({ tag: p.pricelist_tag })) !== null,
        (p) => pricelists.create(readPricelistCreate(p)),
      ),
      rates: await ensure(
        DEMO.rates,
        async (r) =>
          (await rates.find({ pricelist: { tag: r.pricelist_tag }, carrier: { tag: r.carrier_tag }, prefix: r.prefix })) !== null,
        (r) => rates.create(readRateCreate(r)),
      ),
      accounts: await ensure(
        DEMO.accounts,
        async (a) => (await accounts.find({ tag: a.account_tag })) !== null,
        (a) => accounts.create(readAccountCreate(a)),
      ),
    };
    const part = (name: string, t: Tally) => `${name} ${t.created} created, ${t.existing} already there`;
    console.log(
      `demo: ${Object.entries(counts)
        .map(([name, t]) => part(name, t))
        .join('; ')}`,
    );
    return 0;
  } finally {
    await ctx.close();
  }
}

export function runDemo(args: string[]): Promise<number> {
  if (args.length > 0) return Promise.resolve(reportFailure(new UsageError(`rating demo takes no arguments (got ${args.join(' ')})`)));
  return demo().catch(reportFailure);
}

function reportFailure(err: unknown): number {
  return reportCliFailure(err, USAGE, 'demo', 'run `rating demo` again: what it created already is left as it is');
}
