/**
 * bench:hop-cost — what one round trip between two processes costs the process that sends it, on this
 * machine (issue 36: the floor of a call is its hops times this). Three kinds, each one at a time (what a
 * lone call does) and with several in flight (what sharing a hop between calls buys):
 *
 * - a raw socket: 300-byte messages echoed by a child Node process, over loopback TCP and a Unix socket;
 * - a MongoDB command through the Node driver, on the embedded MongoDB-wire server (memory backend, the
 *   benchmark's): an `update` and a `find` of one account holding 10 entries, through the collection API
 *   and as `db.command`; the server's CPU per command beside it;
 * - a Redis command through ioredis (`GET`), on the local redis-server's Unix socket.
 *
 * CPU is the client's `process.cpuUsage()` (user + system) and the servers' /proc/<pid>/stat, divided
 * by the round trips; each figure is the median of --rounds rounds after one of warm-up.
 *
 *   npm run bench:hop-cost -- [--count 4000] [--rounds 5]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MongoClient, type Collection } from 'mongodb';
import Redis from 'ioredis';
import { startLocalServices } from '../src/shared/infra/services/local-services';
import { freePort } from '../src/shared/infra/services/process-tools';
import { cpuSeconds, serverPid } from './agent/processes';
import { median } from './agent/stats';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const COUNT = arg('count', 4000);
const ROUNDS = arg('rounds', 5);

interface Figure {
  client: number;
  server?: number;
}

/** Runs `rounds + 1` rounds of `count` round trips, `inFlight` at a time; the first round warms up. */
async function measure(inFlight: number, serverPidOf: number | undefined, roundTrip: (i: number) => Promise<unknown>): Promise<Figure> {
  const clients: number[] = [];
  const servers: number[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    const cpu0 = process.cpuUsage();
    const server0 = serverPidOf === undefined ? undefined : cpuSeconds(serverPidOf);
    let next = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < COUNT) await roundTrip(next++);
      }),
    );
    const cpu = process.cpuUsage(cpu0);
    const server1 = serverPidOf === undefined ? undefined : cpuSeconds(serverPidOf);
    if (round === 0) continue;
    clients.push((cpu.user + cpu.system) / COUNT);
    if (server0 !== undefined && server1 !== undefined) servers.push(((server1 - server0) * 1e6) / COUNT);
  }
  return { client: median(clients), server: servers.length ? median(servers) : undefined };
}

const show = (f: Figure) =>
  `client ${f.client.toFixed(0).padStart(4)} µs${f.server === undefined ? '' : `, server ${f.server.toFixed(0).padStart(4)} µs`}`;

/** An echo server in its own process, so each round trip crosses processes as the service's hops do. */
const ECHO = `
const net = require('node:net');
const address = process.argv[1];
net.createServer((s) => { s.setNoDelay?.(true); s.on('data', (d) => s.write(d)); })
  .listen(/^\\d+$/.test(address) ? { port: Number(address), host: '127.0.0.1' } : { path: address }, () => process.send('ready'));
`;

async function echoServer(address: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', ECHO, address], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`echo server exited (${code})`)));
  });
  return child;
}

/** One socket per request in flight; a round trip is a 300-byte message and its echo. */
async function socketRoundTrips(connect: () => net.Socket, inFlight: number, pid: number | undefined): Promise<Figure> {
  const message = Buffer.alloc(300, 1);
  const sockets = await Promise.all(
    Array.from({ length: inFlight }, () => {
      const socket = connect();
      socket.setNoDelay?.(true);
      return new Promise<net.Socket>((resolve) => socket.once('connect', () => resolve(socket)));
    }),
  );
  const pending = new Map<net.Socket, { got: number; done: () => void }>();
  for (const socket of sockets)
    socket.on('data', (data: Buffer) => {
      const p = pending.get(socket)!;
      p.got += data.length;
      if (p.got >= message.length) p.done();
    });
  const free = [...sockets];
  const figure = await measure(inFlight, pid, async () => {
    const socket = free.pop()!;
    await new Promise<void>((resolve) => {
      pending.set(socket, { got: 0, done: resolve });
      socket.write(message);
    });
    free.push(socket);
  });
  for (const socket of sockets) socket.destroy();
  return figure;
}

async function seedAccounts(collection: Collection): Promise<void> {
  await collection.deleteMany({});
  await collection.insertMany(
    Array.from({ length: 100 }, (_, i) => ({
      _id: `a${i}` as never,
      balance: 0,
      running_transactions: Array.from({ length: 10 }, (_, j) => ({ id: `e${j}`, tag: 'x'.repeat(40) })),
    })),
  );
}

async function main(): Promise<void> {
  const cpus = os.cpus();
  console.log(
    `conditions: ${cpus.length} CPUs (${cpus[0]?.model ?? 'unknown'}), node ${process.version}, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; ${COUNT} round trips a round, median of ${ROUNDS} rounds after one of warm-up`,
  );
  const lines: string[] = [];
  const say = (line: string) => {
    lines.push(line);
    console.log(line);
  };

  const dir = mkdtempSync(path.join(os.tmpdir(), 'hop-cost-'));
  const socketPath = path.join(dir, 'echo.sock');
  const tcpPort = await freePort();
  const tcpEcho = await echoServer(String(tcpPort));
  const unixEcho = await echoServer(socketPath);
  try {
    for (const inFlight of [1, 8]) {
      say(
        `raw socket, TCP loopback, ${inFlight} in flight:  ${show(await socketRoundTrips(() => net.connect(tcpPort, '127.0.0.1'), inFlight, tcpEcho.pid))} (echo process)`,
      );
      say(
        `raw socket, Unix socket,  ${inFlight} in flight:  ${show(await socketRoundTrips(() => net.connect(socketPath), inFlight, unixEcho.pid))} (echo process)`,
      );
    }
  } finally {
    tcpEcho.kill();
    unixEcho.kill();
    rmSync(dir, { recursive: true, force: true });
  }

  const services = await startLocalServices({ mongoUrl: undefined, redisUrl: undefined, dataDir: '' }, { ephemeral: true });
  const mongo = new MongoClient(services.mongoUrl);
  const redis = new Redis(services.redisUrl);
  try {
    await mongo.connect();
    const db = mongo.db('bench_hop_cost');
    const accounts = db.collection('accounts');
    await seedAccounts(accounts);
    const mongoPid = serverPid(services.mongoUrl);
    const kinds: [string, (i: number) => Promise<unknown>][] = [
      ['update, collection API', (i) => accounts.updateOne({ _id: `a${i % 100}` as never }, { $inc: { balance: 1 } })],
      [
        'update, db.command     ',
        (i) => db.command({ update: 'accounts', updates: [{ q: { _id: `a${i % 100}` }, u: { $inc: { balance: 1 } } }] }),
      ],
      ['find,   collection API', (i) => accounts.findOne({ _id: `a${i % 100}` as never })],
      ['find,   db.command     ', (i) => db.command({ find: 'accounts', filter: { _id: `a${i % 100}` }, limit: 1, singleBatch: true })],
    ];
    for (const inFlight of [1, 16])
      for (const [name, roundTrip] of kinds)
        say(`MongoDB ${name}, ${String(inFlight).padStart(2)} in flight: ${show(await measure(inFlight, mongoPid, roundTrip))}`);
    await redis.set('hop', 'x'.repeat(100));
    const redisPid = serverPid(services.redisUrl);
    for (const inFlight of [1, 16])
      say(
        `Redis GET (ioredis, ${services.redisUrl.startsWith('unix') ? 'Unix socket' : 'TCP'}), ${String(inFlight).padStart(2)} in flight: ${show(await measure(inFlight, redisPid, () => redis.get('hop')))}`,
      );
  } finally {
    redis.disconnect();
    await mongo.close();
    await services.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
