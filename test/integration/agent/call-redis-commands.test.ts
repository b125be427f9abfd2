import type { Redis } from 'ioredis';
import { AgentHarness, startAgentHarness, waitFor } from '../../support/agent-harness';
import { openMonitor, type RedisMonitor } from '../../support/redis-monitor';
import { uniqueName } from '../../support/harness';
import { account, perSecondRating, seed } from '../../support/seed';

/**
 * Issue 36, counted: the Redis commands one single-party prepaid call costs (authorization, begin, end
 * and its charge), as redis-server sees them with MONITOR, from the agent and one worker process: job
 * adds, fetches, blocking waits, completions and replies. Commands run inside BullMQ's scripts are not
 * round trips and are not counted; neither is the maintenance queue's own traffic. One call at a time is
 * the costliest case: every job wakes an idle worker (docs/BENCHMARKS.md, "Issue 36: where it stands").
 * The figure is a ceiling: a change that adds a round trip to the call path fails here.
 */
describe('Redis commands per single-party prepaid call', () => {
  let h: AgentHarness;
  let monitor: RedisMonitor;
  let counting = false;
  const counts = new Map<string, number>();
  const markers = new Map<string, () => void>();

  /** Resolves once MONITOR has shown every command Redis ran before this point (it reports them in order). */
  const caughtUp = async () => {
    const marker = uniqueName('marker');
    const seen = new Promise<void>((resolve) => markers.set(marker, resolve));
    await h.ctx.redis.echo(marker);
    await seen;
  };

  /** Whether the worker waits on both call-path queues (BZPOPMIN on their markers), as an idle worker does. */
  const idle = async () => {
    const clients = String(await h.ctx.redis.client('LIST')).split('\n');
    return clients.filter((line) => / flags=\S*b/.test(line) && line.includes(' cmd=bzpopmin')).length >= 2;
  };

  beforeAll(async () => {
    h = await startAgentHarness(1);
    await seed(h.ctx, { ...perSecondRating(), accounts: [account('solo', { balance: 1_000_000n })] });
    const prefix = h.ctx.config.queuePrefix;
    const callPath = [`${prefix}:transactions`, `${prefix}:processing`, `${prefix}:replies:`];
    monitor = await openMonitor(h.ctx.redis as Redis);
    monitor.onCommand((args, byScript) => {
      if (args[0] === 'echo') markers.get(args[1])?.();
      if (!counting || byScript || !args.some((a) => callPath.some((p) => a.includes(p)))) return;
      const queue = args.find((a) => a.startsWith(`${prefix}:processing`)) ? 'processing ' : '';
      const name = `${queue}${args[0] === 'evalsha' ? `evalsha/${args[2]} keys` : args[0]}`;
      counts.set(name, (counts.get(name) ?? 0) + 1);
    });
  });

  afterAll(async () => {
    monitor?.close();
    await h?.close();
  });

  /** One call, authorization to charge, each step once the one before is answered. */
  const oneCall = async (tag: string) => {
    const call = { transaction_tag: tag, account_tag: 'solo', source: '100', destination: '391234' };
    expect((await h.rest('/v1/authorization', call)).body).toMatchObject({ authorized: true });
    expect((await h.rest('/v1/begin_transaction', { ...call, timestamp_begin: '2026-11-21T10:00:00Z' })).body).toMatchObject({ ok: true });
    expect(
      (await h.rest('/v1/end_transaction', { transaction_tag: tag, account_tag: 'solo', timestamp_end: '2026-11-21T10:00:30Z' })).body,
    ).toMatchObject({ ok: true });
    await waitFor(
      async () => (await h.ctx.mongo.collections.accounts.findOne({ account_tag: 'solo' }))!.running_transactions.length === 0,
      'the call charged',
    );
    await waitFor(idle, 'the worker idle again');
    await caughtUp();
  };

  it('a call costs at most 24 (21 measured; the goal is 8)', async () => {
    await waitFor(idle, 'an idle worker');
    // The first call of a process loads BullMQ's scripts into Redis: not what a call costs.
    await oneCall('warm-up');
    counting = true;
    await oneCall('r1');
    counting = false;
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    // Past the ceiling, the failure shows which command grew. Measured: 21 (per job an add, two blocking
    // waits, two fetches, a completion and a reply); the worker's timers (stalled-job checks, lock
    // renewals) may add one or two to a call's window.
    expect(total <= 24 ? 'at most 24' : { total, counts: Object.fromEntries(counts) }).toBe('at most 24');
    // Three answers, and no job on the processing queue: the charge runs in the end's job.
    expect(counts.get('publish')).toBe(3);
    const processingScripts = [...counts].filter(([name]) => name.startsWith('processing evalsha'));
    expect(processingScripts).toEqual([]);
  });
});
