import { Queue, QueueEvents, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { createRedis, type RedisClient } from '../../src/shared/infra/redis';
import { LeanWorker } from '../../src/workers/lean-worker';
import { serverUrls, uniqueName } from '../support/harness';
import { openMonitor, type RedisMonitor } from '../support/redis-monitor';

/**
 * LeanWorker (src/workers/lean-worker.ts) skips the fetch BullMQ makes right after taking a job it woke
 * up for. Counted on the wire with MONITOR: which `moveToActive` scripts reach Redis for our queue, and
 * that no job is left waiting by the skip (a long block timeout would hold a stranded job past jest's).
 */

let redis: RedisClient;
let monitor: RedisMonitor | undefined;
/** Connections handed to BullMQ, which closes only the ones it made itself. */
const connections: RedisClient[] = [];
const connection = () => {
  const c = createRedis(serverUrls().redisUrl);
  connections.push(c);
  return c;
};
/** Every queue, queue-events and worker made, closed in afterAll if a test failed before its teardown. */
const created: (Queue | QueueEvents | Worker)[] = [];
const made = <T extends Queue | QueueEvents | Worker>(c: T): T => {
  created.push(c);
  return c;
};
/** Script calls per queue name: `moveToActive` is the only BullMQ script whose first key is the wait list with 11 keys. */
const moveToActiveCalls = new Map<string, number>();
/** ECHO markers awaited in the MONITOR stream. */
const markers = new Map<string, () => void>();

beforeAll(async () => {
  redis = createRedis(serverUrls().redisUrl);
  monitor = await openMonitor(redis as Redis);
  monitor.onCommand((args) => {
    if (args[0] === 'echo') markers.get(args[1])?.();
    if (args[0] !== 'evalsha' || args[2] !== '11') return;
    const wait = /^(.*):wait$/.exec(args[3] ?? '');
    if (wait) moveToActiveCalls.set(wait[1], (moveToActiveCalls.get(wait[1]) ?? 0) + 1);
  });
});

afterAll(async () => {
  monitor?.close();
  // What a failed test left open: BullMQ's own blocking connections would keep jest from exiting.
  await Promise.all(created.map((c) => (c instanceof Worker ? c.close(true) : c.close())));
  await Promise.all([redis, ...connections].map((c) => c.quit()));
});

interface Setup {
  queue: Queue;
  events: QueueEvents;
  prefix: string;
  name: string;
}

async function setup(): Promise<Setup> {
  const prefix = uniqueName('lw');
  const name = 'jobs';
  const queue = made(new Queue(name, { connection: connection(), prefix }));
  const events = made(new QueueEvents(name, { connection: connection(), prefix }));
  await events.waitUntilReady();
  return { queue, events, prefix, name };
}

async function teardown(s: Setup, workers: Worker[]): Promise<void> {
  await Promise.all(workers.map((w) => w.close()));
  await s.events.close();
  await s.queue.obliterate({ force: true });
  await s.queue.close();
}

const noop = async (job: Job) => job.data as unknown;

/** Resolves once the queue's worker waits on its blocking connection (BZPOPMIN), as an idle worker does. */
async function blocked(s: Setup): Promise<void> {
  const name = `${s.prefix}:${Buffer.from(s.name).toString('base64')}`;
  for (;;) {
    const clients = String(await redis.client('LIST')).split('\n');
    if (clients.some((line) => line.includes(` name=${name} `) && / flags=\S*b/.test(line) && line.includes(' cmd=bzpopmin'))) return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/**
 * Adds `count` jobs one at a time, each once the worker is idle again, as calls reach the workers at
 * a low rate: every job is taken on a wake-up.
 */
async function oneAtATime(s: Setup, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await blocked(s);
    const job = await s.queue.add('j', { i });
    await job.waitUntilFinished(s.events, 10_000);
  }
}

/**
 * The worker's `moveToActive` calls so far, once it is idle again: MONITOR reports commands in the
 * order Redis ran them, so when a marker sent after the worker blocked comes through, its calls have.
 */
async function settledCount(s: Setup): Promise<number> {
  await blocked(s);
  const marker = uniqueName('marker');
  const seen = new Promise<void>((resolve) => markers.set(marker, resolve));
  await redis.echo(marker);
  await seen;
  return moveToActiveCalls.get(`${s.prefix}:${s.name}`) ?? 0;
}

test("a job taken on a wake-up costs one moveToActive less than with BullMQ's Worker", async () => {
  const count = 20;
  const counts: Record<string, number> = {};
  for (const [kind, make] of [
    ['bullmq', (s: Setup) => new Worker(s.name, noop, { connection: connection(), prefix: s.prefix, concurrency: 16 })],
    ['lean', (s: Setup) => new LeanWorker(s.name, noop, { connection: connection(), prefix: s.prefix, concurrency: 16 })],
  ] as const) {
    const s = await setup();
    const worker = made(make(s));
    await worker.waitUntilReady();
    await oneAtATime(s, 3); // the worker is blocking on the marker from here on
    const before = await settledCount(s);
    await oneAtATime(s, count);
    counts[kind] = (await settledCount(s)) - before;
    await teardown(s, [worker]);
  }
  // BullMQ, per job: the fetch it woke for, the probe that finds the queue empty, and one more empty
  // fetch after waking at once on the marker its first fetch put back (3 a job, measured). Lean: the probe goes.
  expect(counts.bullmq - counts.lean).toBe(count);
  expect(counts.lean).toBeGreaterThanOrEqual(count);
});

test('jobs added in bursts to two workers are all taken: the skipped fetch strands none', async () => {
  const s = await setup();
  const done = new Set<number>();
  // A block timeout longer than the test: a job nobody fetched would wait for it, and the test time out.
  const make = () =>
    new LeanWorker(s.name, async (job: Job<{ i: number }>) => void done.add(job.data.i), {
      connection: connection(),
      prefix: s.prefix,
      concurrency: 4,
      drainDelay: 120,
    });
  const workers = [made(make()), made(make())];
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  let next = 0;
  for (const burst of [1, 2, 1, 7, 1, 1, 3, 30, 1, 5]) {
    const jobs = await s.queue.addBulk(Array.from({ length: burst }, () => ({ name: 'j', data: { i: next++ } })));
    await Promise.all(jobs.map((job) => job.waitUntilFinished(s.events, 20_000)));
  }
  expect(done.size).toBe(next);
  expect(await s.queue.getJobCounts('waiting', 'active')).toMatchObject({ waiting: 0, active: 0 });
  await teardown(s, workers);
}, 60_000);
