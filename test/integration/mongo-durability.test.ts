import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { ensureLauncherJar } from '../../src/shared/infra/services/mongo-server';
import { stopChild } from '../../src/shared/infra/services/redis-server';
import { startH2MongoServer } from '../support/mongo-process';

/**
 * The money paths rely on an acknowledged write being durable. This SIGKILLs the persistent (--h2)
 * launcher while many clients are writing, restarts it on the same file, and checks that every
 * write acknowledged before the kill is there. The test starts its own server (not the shared one).
 */
describe('MongoDB-wire server (--h2) durability of acknowledged writes', () => {
  const LOOPS = 20;
  const KILL_AFTER_ACKED = 4000;

  let dir: string;
  let server: ChildProcess | undefined;

  beforeAll(() => {
    // Built here, under the long hook timeout, rather than inside the test.
    ensureLauncherJar();
    dir = mkdtempSync(path.join(os.tmpdir(), 'rating-durability-'));
  }, 180000);

  afterAll(async () => {
    if (server) await stopChild(server);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function startServer(file: string): Promise<{ child: ChildProcess; url: string }> {
    const started = await startH2MongoServer(file);
    server = started.child;
    return started;
  }

  const clientOptions = {
    maxPoolSize: 1,
    retryWrites: false,
    retryReads: false,
    serverSelectionTimeoutMS: 1000,
    connectTimeoutMS: 1000,
  };

  it('every write acknowledged before a SIGKILL survives the restart', async () => {
    const file = path.join(dir, 'db.mv');
    const first = await startServer(file);
    const clients = await Promise.all(Array.from({ length: LOOPS }, () => new MongoClient(first.url, clientOptions).connect()));
    const docs = (c: MongoClient) => c.db('durability').collection<{ _id: string; loop: number; k: number; pad: string }>('docs');
    const counters = (c: MongoClient) => c.db('durability').collection<{ _id: string; n: number }>('counters');

    // One counter per loop, so each counter's bounds are exact: acked <= n <= acked + in flight.
    await counters(clients[0]).insertMany(Array.from({ length: LOOPS }, (_, i) => ({ _id: `c${i}`, n: 0 })));

    const insertsAcked = new Set<string>();
    const insertsUnknown = new Set<string>(); // in flight at the kill (or attempted after it): may or may not be there
    const incAcked = new Array<number>(LOOPS).fill(0);
    const incUnknown = new Array<number>(LOOPS).fill(0);
    let acked = 0;
    let killedAt = 0;
    const started = Date.now();
    const exited = new Promise<void>((resolve) => first.child.once('exit', () => resolve()));
    const kill = () => {
      if (killedAt) return;
      killedAt = Date.now();
      first.child.kill('SIGKILL');
    };

    // Each loop alternates insertOne and $inc until its first error (the server is gone).
    const loop = async (i: number) => {
      for (let k = 0; ; k++) {
        if (k % 2 === 0) {
          const id = `d${i}-${k}`;
          try {
            await docs(clients[i]).insertOne({ _id: id, loop: i, k, pad: 'x'.repeat(200) });
          } catch {
            insertsUnknown.add(id);
            return;
          }
          insertsAcked.add(id);
        } else {
          try {
            await counters(clients[i]).updateOne({ _id: `c${i}` }, { $inc: { n: 1 } });
          } catch {
            incUnknown[i]++;
            return;
          }
          incAcked[i]++;
        }
        // Kill right after an acknowledgement while the other loops have writes in flight.
        if (++acked >= KILL_AFTER_ACKED) kill();
      }
    };
    await Promise.all(Array.from({ length: LOOPS }, (_, i) => loop(i)));
    await exited;
    await Promise.all(clients.map((c) => c.close(true).catch(() => undefined)));
    const ackedBeforeKill = KILL_AFTER_ACKED;
    const writesPerSecond = Math.round(ackedBeforeKill / ((killedAt - started) / 1000));

    const second = await startServer(file);
    const verifier = await new MongoClient(second.url, clientOptions).connect();
    try {
      const present = new Set(
        (
          await docs(verifier)
            .find({}, { projection: { _id: 1 } })
            .toArray()
        ).map((d) => d._id),
      );
      const counterValues = new Map((await counters(verifier).find({}).toArray()).map((d) => [d._id, d.n]));

      const lostInserts = [...insertsAcked].filter((id) => !present.has(id));
      const unexpected = [...present].filter((id) => !insertsAcked.has(id) && !insertsUnknown.has(id));
      const counterProblems: string[] = [];
      let lostIncrements = 0;
      for (let i = 0; i < LOOPS; i++) {
        const n = counterValues.get(`c${i}`);
        if (n === undefined) {
          counterProblems.push(`c${i} missing (acked $inc ${incAcked[i]})`);
          lostIncrements += incAcked[i];
        } else if (n < incAcked[i] || n > incAcked[i] + incUnknown[i]) {
          counterProblems.push(`c${i} = ${n}, acked $inc ${incAcked[i]}, in flight ${incUnknown[i]}`);
          lostIncrements += Math.max(0, incAcked[i] - n);
        }
      }
      const totalAcked = insertsAcked.size + incAcked.reduce((a, b) => a + b, 0) + LOOPS;
      console.log(
        `mongo-durability: ${totalAcked} acknowledged writes (${insertsAcked.size} inserts, ${totalAcked - insertsAcked.size - LOOPS} $inc, ` +
          `${LOOPS} counter inserts), ${insertsUnknown.size + incUnknown.reduce((a, b) => a + b, 0)} in flight at the kill; ` +
          `lost after restart: ${lostInserts.length} inserts, ${lostIncrements} $inc, ${counterValues.size < LOOPS ? LOOPS - counterValues.size : 0} counter docs; ` +
          `${writesPerSecond} writes/s with ${LOOPS} clients before the kill`,
      );

      expect(lostInserts.slice(0, 20)).toEqual([]);
      expect(lostInserts).toHaveLength(0);
      expect(counterProblems).toEqual([]);
      expect(unexpected).toEqual([]);
      // The recovered store takes writes again.
      await docs(verifier).insertOne({ _id: 'after-restart', loop: -1, k: 0, pad: '' });
      expect(await docs(verifier).countDocuments({ _id: 'after-restart' })).toBe(1);
    } finally {
      await verifier.close();
      await stopChild(second.child);
      server = undefined;
    }
  }, 60000);
});
