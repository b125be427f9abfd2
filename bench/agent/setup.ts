import type { AppContext } from '../../src/shared/domain/context';
import type { AccountDoc } from '../../src/shared/domain/types';
import { ensureIndexes } from '../../src/shared/domain/store';
import { account, carrier, pricelist, rate, seed } from '../../test/support/seed';

export interface Options {
  workers: number;
  accounts: number;
  parents: number;
  /** One open-loop step at this rate (`--cps`); undefined: none. */
  cps?: number;
  hold: number;
  /** Seconds of a single step (`--cps`). */
  seconds: number;
  /** Seconds of each sweep step. */
  sweepSeconds: number;
  sweep: boolean;
  steps: number[];
  closed: boolean;
  pairs: number;
  concurrency: number;
  warmup: number;
  profile?: string;
}

const USAGE = `npm run bench:agent -- [--sweep] [--cps N] [--closed] [--hold S] [--seconds T] [--steps 50,100,...]
  [--pairs N] [--concurrency C] [--workers N] [--accounts N] [--warmup S] [--profile DIR]
no mode flag: --sweep, then --closed`;

export function parseOptions(argv: string[]): Options {
  const o: Options = {
    // One worker process per spare core: on two cores the agent, Redis and MongoDB have the rest, and
    // a second worker process cost 1.4 ms of CPU per call more at 175 calls/s (docs/BENCHMARKS.md,
    // "Findings that shaped the code": one worker process on two cores). `--workers 2` measures that layout.
    workers: 1,
    accounts: 1000,
    parents: 5,
    hold: 2,
    seconds: 20,
    sweepSeconds: 10,
    sweep: false,
    steps: [25, 50, 100, 150, 200, 250, 300, 400, 500],
    closed: false,
    pairs: 3000,
    concurrency: 32,
    warmup: 40,
  };
  let secondsGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${name} needs a value\n${USAGE}`);
      return v;
    };
    const num = (min: number, max: number) => {
      const v = Number(value());
      if (!Number.isFinite(v) || v < min || v > max) throw new Error(`${name} needs a number from ${min} to ${max}`);
      return v;
    };
    if (name === '--workers') o.workers = Math.round(num(1, 64));
    else if (name === '--accounts') o.accounts = Math.round(num(10, 1_000_000));
    else if (name === '--cps') o.cps = num(0.1, 100_000);
    else if (name === '--hold') o.hold = num(0, 3600);
    else if (name === '--seconds') {
      o.seconds = o.sweepSeconds = num(1, 3600);
      secondsGiven = true;
    } else if (name === '--sweep') o.sweep = true;
    else if (name === '--steps') {
      o.steps = value().split(',').map(Number);
      if (o.steps.some((s) => !(s > 0))) throw new Error('--steps needs rates like 50,100,200');
      o.sweep = true;
    } else if (name === '--closed') o.closed = true;
    else if (name === '--pairs') o.pairs = Math.round(num(1, 10_000_000));
    else if (name === '--concurrency') o.concurrency = Math.round(num(1, 10_000));
    else if (name === '--warmup') o.warmup = num(0, 600);
    else if (name === '--profile') o.profile = value();
    else if (name === '--help' || name === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else throw new Error(`unknown option ${name}\n${USAGE}`);
  }
  if (!secondsGiven) o.sweepSeconds = 10;
  if (!o.sweep && !o.closed && o.cps === undefined) {
    o.sweep = true;
    o.closed = true;
  }
  return o;
}

export const accountTag = (i: number) => `acc${i}`;

/**
 * Rating data and accounts, straight into MongoDB (test/support/seed.ts) and announced to the workers:
 * two carriers with the same rates (60 per minute, 1 s increments) on four country codes; prepaid
 * accounts with balances no bench can use up and no concurrency limit; every tenth account (acc5,
 * acc15, ...) linked to one of `parents` parent accounts, which are charged and checked too.
 */
export async function seedBench(ctx: AppContext, o: Options): Promise<{ linked: number }> {
  const huge = 1_000_000_000_000_000n;
  const prefixes = ['39', '44', '49', '33'];
  const rates = prefixes.flatMap((p) => [
    rate('pl', 'c1', p, { rate: 60, rate_increment: 1, connect_fee: 0 }),
    rate('pl', 'c2', p, { rate: 60, rate_increment: 1, connect_fee: 0 }),
  ]);
  const parents: AccountDoc[] = Array.from({ length: o.parents }, (_, k) =>
    account(`parent${k}`, { balance: huge, max_concurrent_transactions: null }),
  );
  let linked = 0;
  const accounts: AccountDoc[] = Array.from({ length: o.accounts }, (_, i) => {
    const link = o.parents > 0 && i % 10 === 5;
    if (link) linked += 1;
    return account(accountTag(i), {
      balance: huge,
      max_concurrent_transactions: null,
      linked_accounts: link ? [`parent${Math.floor(i / 10) % o.parents}`] : [],
    });
  });
  await ctx.mongo.db.dropDatabase();
  // dropDatabase removed the indexes the context made; the processes' own contexts make them again, the bench's are made here.
  await ensureIndexes(ctx.mongo.collections);
  await seed(ctx, { carriers: [carrier('c1'), carrier('c2')], pricelists: [pricelist('pl')], rates, accounts: [...parents, ...accounts] });
  return { linked };
}
