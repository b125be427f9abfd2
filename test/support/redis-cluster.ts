import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { ensureRedisServer, stopChild } from '../../src/shared/infra/services/redis-server';
import { sleep, which, withParentDeathSignal } from '../../src/shared/infra/services/process-tools';

/**
 * A real Redis Cluster on loopback for a test: `size` masters (no replicas) in a temp dir, created
 * with `redis-cli --cluster create` (Debian's redis-tools, a dependency of redis-server). Ephemeral:
 * no persistence; stop() ends every redis-server it started and removes the dir.
 */
export interface RedisClusterHandle {
  ports: number[];
  /** REDIS_CLUSTER_NODES for it: `127.0.0.1:P1,127.0.0.1:P2,...`. */
  nodes: string;
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, HOST, () => server.close(() => resolve(true)));
  });
}

/** A port P with P and its cluster-bus port P + 10000 free (the OS's ephemeral range may not leave room above). */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20000 + Math.floor(Math.random() * 20000);
    if (taken.has(port) || taken.has(port + 10000) || taken.has(port - 10000)) continue;
    if ((await canListen(port)) && (await canListen(port + 10000))) return port;
  }
  throw new Error('no free port pair for a Redis Cluster node');
}

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

async function clusterInfo(port: number): Promise<string> {
  const probe = new Redis(port, HOST, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return String(await probe.call('CLUSTER', 'INFO'));
  } catch {
    return '';
  } finally {
    probe.disconnect();
  }
}

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`Redis Cluster: timed out waiting for ${what}`);
    await sleep(50);
  }
}

export async function startRedisCluster(size = 3): Promise<RedisClusterHandle> {
  const binary = ensureRedisServer();
  const cli = which('redis-cli');
  if (!cli) throw new Error('redis-cli is not installed (Debian package redis-tools, a dependency of redis-server)');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rating-redis-cluster-'));
  const children: ChildProcess[] = [];
  const ports: number[] = [];
  const stop = async () => {
    await Promise.allSettled(children.map((child) => stopChild(child, 5000)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const taken = new Set<number>();
    for (let i = 0; i < size; i++) {
      const port = await freeClusterPort(taken);
      taken.add(port);
      ports.push(port);
      const [command, args] = withParentDeathSignal(binary, [
        '--bind',
        HOST,
        '--port',
        String(port),
        '--dir',
        dir,
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        path.join(dir, `nodes-${port}.conf`),
        '--appendonly',
        'no',
        '--save',
        '',
        '--daemonize',
        'no',
        '--protected-mode',
        'no',
        '--loglevel',
        'warning',
        '--maxmemory-policy',
        'noeviction',
      ]);
      children.push(spawn(command, args, { stdio: 'ignore' }));
    }
    await waitUntil('the nodes to listen', async () => (await Promise.all(ports.map(clusterInfo))).every((info) => info !== ''), 10000);
    const created = await run(cli, [
      '--cluster',
      'create',
      ...ports.map((p) => `${HOST}:${p}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    if (created.code !== 0) throw new Error(`redis-cli --cluster create failed (${created.code}): ${created.output}`);
    // Every node must know every slot and every other node before clients connect.
    await waitUntil(
      'cluster_state:ok on every node',
      async () =>
        (await Promise.all(ports.map(clusterInfo))).every(
          (info) =>
            info.includes('cluster_state:ok') &&
            info.includes('cluster_slots_assigned:16384') &&
            info.includes(`cluster_known_nodes:${size}`),
        ),
      20000,
    );
    return { ports, nodes: ports.map((p) => `${HOST}:${p}`).join(','), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
