import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import type { Logger } from 'pino';
import { freePort, sleep, which, withParentDeathSignal } from './process-tools';
import { RunningServer, stopChild } from './redis-server';

const repoRoot = path.resolve(__dirname, '..', '..', '..', '..');
export const launcherDir = path.join(repoRoot, 'tools', 'mongo-server');
export const launcherJar = path.join(launcherDir, 'target', 'mongo-server.jar');

function newestSourceMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'target') continue;
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSourceMtime(full) : statSync(full).mtimeMs);
  }
  return newest;
}

/** Builds the launcher jar (Maven) when it is missing or older than its sources. */
export function ensureLauncherJar(logger?: Logger): string {
  if (existsSync(launcherJar) && statSync(launcherJar).mtimeMs >= newestSourceMtime(launcherDir)) return launcherJar;
  if (!which('mvn')) throw new Error('Maven (mvn) is needed to build tools/mongo-server: install maven and a JDK 17, or set MONGO_URL');
  logger?.info('building the local MongoDB-wire server (tools/mongo-server, first run downloads from Maven Central)');
  const result = spawnSync('mvn', ['-q', '-B', 'package', '-DskipTests'], { cwd: launcherDir, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0 || !existsSync(launcherJar)) throw new Error('building tools/mongo-server failed (see Maven output above)');
  return launcherJar;
}

/**
 * Waits for the launcher's `READY host:port` line and returns its URL; rejects if it exits first or
 * takes longer than `timeoutMs`. Keeps draining its pipes afterwards so it never blocks on a full buffer.
 */
export function launcherReady(child: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => reject(new Error(`mongo-server did not start in time: ${stderr.trim()}`)), timeoutMs);
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.length > 20000) stderr = stderr.slice(-10000);
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const ready = /READY (\S+):(\d+)/.exec(stdout);
      if (ready) {
        clearTimeout(timer);
        child.stdout!.resume();
        child.stderr!.resume();
        resolve(`mongodb://${ready[1]}:${ready[2]}`);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`mongo-server exited with ${code ?? signal}: ${stderr.trim()}`));
    });
  });
}

export interface MongoServerOptions {
  host: string;
  /** Persistent under this directory; undefined = ephemeral (memory backend, or a temp dbpath for mongod). */
  dataDir?: string;
  logger?: Logger;
}

export async function startMongoServer(options: MongoServerOptions): Promise<RunningServer & { kind: string }> {
  const mongod = which('mongod');
  return mongod ? startMongod(mongod, options) : startLauncher(options);
}

async function startMongod(binary: string, options: MongoServerOptions) {
  const port = await freePort(options.host);
  const dir = options.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'rating-mongod-'));
  mkdirSync(dir, { recursive: true });
  const [command, args] = withParentDeathSignal(binary, [
    '--bind_ip',
    options.host,
    '--port',
    String(port),
    '--dbpath',
    path.resolve(dir),
    '--quiet',
  ]);
  // Its own process group when setpriv stops it with us: Ctrl-C reaches the service only (see startRedisServer).
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit'], detached: command !== binary });
  const url = `mongodb://${options.host}:${port}`;
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error(`mongod exited with ${child.exitCode}`);
    const client = new MongoClient(url, { serverSelectionTimeoutMS: 200 });
    try {
      await client.connect();
      await client.db('admin').command({ ping: 1 });
      break;
    } catch (err) {
      if (attempt > 300) throw err;
      await sleep(100);
    } finally {
      await client.close();
    }
  }
  options.logger?.info({ url }, 'local mongod started');
  return {
    kind: 'mongod',
    url,
    stop: async () => {
      await stopChild(child);
      if (!options.dataDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function startLauncher(options: MongoServerOptions) {
  const jar = ensureLauncherJar(options.logger);
  // SerialGC: the server shares two cores with five other processes, and a parallel collector's pause
  // takes both of them from the agent and the workers at once (p99 at 100-150 calls/s, docs/BENCHMARKS.md);
  // the 1M-call import, whose heap grows to gigabytes, measured within its run-to-run noise with it.
  const javaArgs = ['-XX:+UseSerialGC', '-Xss1m'];
  // The memory backend keeps every document as Java objects on the heap: with the JVM's default cap
  // (a quarter of RAM) a 1M-call import filled it and crawled in back-to-back full GCs. The cap only
  // bounds growth; the heap is taken as data arrives.
  if (!options.dataDir) javaArgs.push('-XX:MaxRAMPercentage=60');
  // Documents that live for good, arriving fast (an import): with the default sizing the heap grew by
  // full collections, each marking every record held (9 s of a 1M-call import), and the young generation
  // grew with it, so each young pause copied hundreds of MB. A quarter of RAM to start with (taken as it
  // is touched) leaves the old generation room (docs/BENCHMARKS.md, issue 12 session 6). A stored
  // document that survives one young collection lives for good, so it is promoted at once
  // (MaxTenuringThreshold=0) instead of being copied between survivor spaces up to 15 times; and a small
  // fixed young generation keeps each pause short: every MongoDB command waits out a pause, and at 175
  // calls/s pauses of 20-40 ms once a second were the p99 of call setup (issue 12 session 8: 64 MB and
  // no tenuring, pauses 4 ms at the median, begin p99 39-57 ms against 77-102 ms).
  if (!options.dataDir) javaArgs.push('-XX:InitialRAMPercentage=25', '-Xmn64m', '-XX:MaxTenuringThreshold=0');
  javaArgs.push('-jar', jar, '--host', options.host, '--port', '0');
  if (options.dataDir) {
    mkdirSync(options.dataDir, { recursive: true });
    javaArgs.push('--h2', path.resolve(options.dataDir, 'rating.mv'));
  }
  const [command, args] = withParentDeathSignal('java', javaArgs);
  // stdin stays open: the launcher exits by itself when it closes (a second guard against orphans).
  // Its own process group when setpriv stops it with us: Ctrl-C reaches the service only (see startRedisServer).
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: command !== 'java' });
  const url = await launcherReady(child, 60000);
  options.logger?.info({ url, backend: options.dataDir ? 'h2' : 'memory' }, 'local MongoDB-wire server started');
  return {
    kind: options.dataDir ? 'mongo-java-server (h2)' : 'mongo-java-server (memory)',
    url,
    stop: async () => {
      child.stdin!.end();
      await stopChild(child);
    },
  };
}
