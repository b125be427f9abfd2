import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { connectTo, socketUrl } from '../redis';
import { freePort, sleep, which, withParentDeathSignal } from './process-tools';

export interface RunningServer {
  url: string;
  stop(): Promise<void>;
}

/** Finds redis-server, installing the Debian package when we are root and it is missing. */
export function ensureRedisServer(logger?: Logger): string {
  const found = which('redis-server');
  if (found) return found;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !which('apt-get')) {
    throw new Error('redis-server is not installed: run `sudo apt-get install -y redis-server` (or set REDIS_URL)');
  }
  logger?.info('redis-server not found; installing the Debian package redis-server');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', '--no-install-recommends', 'redis-server'],
  ]) {
    const result = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env });
    if (result.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed; install redis-server by hand or set REDIS_URL`);
  }
  // The package enables a system service on the default port; we run our own instance instead.
  spawnSync('service', ['redis-server', 'stop'], { stdio: 'ignore' });
  const installed = which('redis-server') ?? '/usr/bin/redis-server';
  return installed;
}

export interface RedisServerOptions {
  host: string;
  /** Persistent (append-only file) under this directory; undefined = ephemeral, in a temp dir removed on stop. */
  dataDir?: string;
  logger?: Logger;
}

/** sun_path holds 108 bytes, the last one the terminating NUL. */
const MAX_SOCKET_PATH = 107;

export async function startRedisServer(options: RedisServerOptions): Promise<RunningServer> {
  const binary = ensureRedisServer(options.logger);
  const port = await freePort(options.host);
  const dir = options.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'rating-redis-'));
  mkdirSync(dir, { recursive: true });
  const persistence = options.dataDir ? ['--appendonly', 'yes', '--appendfsync', 'everysec'] : ['--appendonly', 'no', '--save', ''];
  // The processes of this machine talk over the socket (cheaper per command than loopback TCP); the TCP
  // port stays for tools. A socket path is limited to 107 bytes: a deeper data directory keeps TCP.
  const socket = path.resolve(dir, 'redis.sock');
  const useSocket = Buffer.byteLength(socket) <= MAX_SOCKET_PATH;
  const [command, args] = withParentDeathSignal(binary, [
    '--bind',
    options.host,
    '--port',
    String(port),
    '--dir',
    path.resolve(dir),
    ...(useSocket ? ['--unixsocket', socket, '--unixsocketperm', '700'] : []),
    '--daemonize',
    'no',
    '--protected-mode',
    'no',
    '--loglevel',
    'warning',
    // BullMQ requires that queue keys are never evicted.
    '--maxmemory-policy',
    'noeviction',
    ...persistence,
  ]);
  // Its own process group when the kernel stops it with us (setpriv): a terminal's Ctrl-C, sent to the whole
  // foreground group, then reaches only the service, which stops this server after closing its clients
  // (a server stopped first answered their QUIT with EPIPE warnings).
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: command !== binary });
  const url = useSocket ? socketUrl(socket) : `redis://${options.host}:${port}`;
  await waitForRedis(url, child);
  options.logger?.info({ url, dataDir: options.dataDir ?? null }, 'local redis-server started');
  return {
    url,
    stop: async () => {
      await stopChild(child);
      if (!options.dataDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForRedis(url: string, child: ChildProcess): Promise<void> {
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}: ${stderr.trim()}`);
    const probe = connectTo(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      if ((await probe.ping()) === 'PONG') return;
    } catch {
      // not listening yet
    } finally {
      probe.disconnect();
    }
    await sleep(50);
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server did not become ready: ${stderr.trim()}`);
}

export async function stopChild(child: ChildProcess, graceMs = 10000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}
