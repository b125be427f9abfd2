import { QueryGate, type Release } from '../../../src/api/query-gate';
import { ConfigError, loadConfig } from '../../../src/shared/infra/config';

/** Lets pending promise callbacks run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('QueryGate (API_MAX_CONCURRENT_QUERIES)', () => {
  afterEach(() => jest.useRealTimers());

  it('admits max holders at once and queues the rest in arrival order', async () => {
    const gate = new QueryGate(2, 60_000);
    const first = await gate.acquire();
    const second = await gate.acquire();
    expect(first).not.toBeNull();
    expect(second).not.toBeNull();
    expect(gate.running).toBe(2);

    const admitted: string[] = [];
    const third = gate.acquire().then((r) => (admitted.push('third'), r));
    const fourth = gate.acquire().then((r) => (admitted.push('fourth'), r));
    await settle();
    expect(admitted).toEqual([]);
    expect(gate.queued).toBe(2);

    first!();
    await settle();
    expect(admitted).toEqual(['third']);
    expect(gate.running).toBe(2);
    expect(gate.queued).toBe(1);

    second!();
    await settle();
    expect(admitted).toEqual(['third', 'fourth']);
    (await third)!();
    (await fourth)!();
    expect(gate.running).toBe(0);
    expect(gate.queued).toBe(0);
  });

  it('a release counts once however often it is called', async () => {
    const gate = new QueryGate(1, 60_000);
    const release = (await gate.acquire())!;
    const waiting = gate.acquire();
    release();
    release();
    const next = (await waiting)!;
    expect(gate.running).toBe(1);
    // A third request must still wait: the double release did not free a second turn.
    const third = gate.acquire();
    await settle();
    expect(gate.queued).toBe(1);
    next();
    (await third)!();
    expect(gate.running).toBe(0);
  });

  it('refuses a request whose turn does not come within waitMs, and it holds nothing', async () => {
    jest.useFakeTimers();
    const gate = new QueryGate(1, 500);
    const holder = (await gate.acquire())!;
    const waiting = gate.acquire();
    expect(gate.queued).toBe(1);
    jest.advanceTimersByTime(500);
    await expect(waiting).resolves.toBeNull();
    expect(gate.queued).toBe(0);
    expect(gate.running).toBe(1);
    holder();
    expect(gate.running).toBe(0);
  });

  it('with waitMs 0 refuses at once when every turn is taken', async () => {
    const gate = new QueryGate(1, 0);
    const holder = (await gate.acquire())!;
    await expect(gate.acquire()).resolves.toBeNull();
    holder();
    const again = await gate.acquire();
    expect(again).not.toBeNull();
    again!();
  });

  it('drops a waiter whose client went away, and never gives it a turn', async () => {
    const gate = new QueryGate(1, 60_000);
    const holder = (await gate.acquire())!;
    const gone = new AbortController();
    const abandoned = gate.acquire(gone.signal);
    const behind = gate.acquire();
    gone.abort();
    await expect(abandoned).resolves.toBeNull();
    expect(gate.queued).toBe(1);
    holder();
    const next = (await behind)!;
    expect(gate.running).toBe(1);
    next();
    expect(gate.running).toBe(0);
  });

  it('a new request does not overtake those already waiting', async () => {
    const gate = new QueryGate(1, 60_000);
    const holder = (await gate.acquire())!;
    const order: string[] = [];
    const waiting = gate.acquire().then((r) => (order.push('waiting'), r));
    holder();
    // The turn just freed belongs to the waiter, not to a request that arrives now.
    const late = gate.acquire().then((r) => (order.push('late'), r));
    const w: Release = (await waiting)!;
    await settle();
    expect(order).toEqual(['waiting']);
    w();
    (await late)!();
    expect(order).toEqual(['waiting', 'late']);
  });

  it('max 0 admits everyone', async () => {
    const gate = new QueryGate(0, 0);
    const releases = await Promise.all(Array.from({ length: 100 }, () => gate.acquire()));
    expect(releases.every((r) => r !== null)).toBe(true);
  });
});

describe('query gate and API pool settings', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({})).toMatchObject({ apiMaxConcurrentQueries: 2, apiQueryWaitMs: 10_000, apiMongoPoolSize: 10, apiThread: true });
  });

  it('reads them, 0 turning the limit and the separate pool off', () => {
    expect(
      loadConfig({ API_MAX_CONCURRENT_QUERIES: '0', API_QUERY_WAIT_MS: '0', API_MONGO_POOL_SIZE: '0', API_THREAD: '0' }),
    ).toMatchObject({
      apiMaxConcurrentQueries: 0,
      apiQueryWaitMs: 0,
      apiMongoPoolSize: 0,
      apiThread: false,
    });
  });

  it.each([
    [{ API_MAX_CONCURRENT_QUERIES: '-1' }, 'API_MAX_CONCURRENT_QUERIES="-1" must be an integer from 0 to 10000'],
    [{ API_QUERY_WAIT_MS: 'soon' }, 'API_QUERY_WAIT_MS="soon" must be an integer from 0 to 600000'],
    [{ API_MONGO_POOL_SIZE: '5000' }, 'API_MONGO_POOL_SIZE="5000" must be an integer from 0 to 1000'],
    [{ API_THREAD: 'yes' }, 'API_THREAD="yes" must be an integer from 0 to 1'],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
