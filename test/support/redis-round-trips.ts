import type { RedisClient } from '../../src/shared/infra/redis';

/**
 * Counts the Redis round trips of one call as redis-server counts them: its socket reads (`INFO stats`,
 * total_reads_processed), so commands sent together in one write are one round trip, as they cost
 * (issue 36). `probe` must be a connection of its own to a redis-server nobody else uses; its own
 * commands are subtracted. Between calls it waits until the workers are idle again (as many
 * connections blocked in a wait for work as when it started). The worker's timers (the BullMQ queues it
 * also serves wake up every few seconds) may land in one call's window, so callers take the least of
 * several calls. Used by call-redis-commands.test.ts and `npm run bench:agent-commands`.
 */
export class RedisRoundTrips {
  private probes = 0;
  private blockedWhenIdle = 0;

  constructor(private readonly probe: RedisClient) {}

  private async command<T>(run: () => Promise<T>): Promise<T> {
    this.probes += 1;
    return run();
  }

  private async reads(): Promise<number> {
    return Number(/total_reads_processed:(\d+)/.exec(await this.command(() => this.probe.info('stats')))![1]);
  }

  /** Connections blocked in a wait for work (BullMQ's BZPOPMIN, the call queue's BLMOVE). */
  private async blocked(): Promise<number> {
    return String(await this.command(() => this.probe.client('LIST')))
      .split('\n')
      .filter((line) => / flags=\S*b/.test(line)).length;
  }

  private async until(probe: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await probe())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Waits until the workers are idle: as many connections blocked twice in a row, 200 ms apart. */
  async settle(): Promise<void> {
    let last = -1;
    await this.until(async () => {
      const now = await this.blocked();
      const settled = now > 0 && now === last;
      last = now;
      if (!settled) await new Promise((resolve) => setTimeout(resolve, 200));
      return settled;
    }, 'idle workers');
    this.blockedWhenIdle = last;
  }

  /** The round trips `call` costs, waiting for `done` (the call charged) and then for idle workers. */
  async count(call: () => Promise<void>, done: () => Promise<boolean>): Promise<number> {
    const before = await this.reads();
    this.probes = 0;
    await call();
    await this.until(done, 'the call charged');
    await this.until(async () => (await this.blocked()) >= this.blockedWhenIdle, 'idle workers again');
    const after = await this.reads();
    return after - before - this.probes;
  }
}
