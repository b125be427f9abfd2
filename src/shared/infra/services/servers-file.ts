import { mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * `DATA_DIR/servers.json`: where the local servers of a running `npm start` listen, so that `rating`
 * commands run from another terminal with the same DATA_DIR find them (src/cli/servers.ts). Written
 * atomically (a temporary file renamed over it) once the servers answer, removed before they stop and
 * when the process exits; a file left behind by a killed process names a pid that is gone.
 */
export const SERVERS_FILE = 'servers.json';

export interface ServersRecord {
  /** The service process that started the servers. */
  pid: number;
  /** The local MongoDB-wire server, the service's database in its path; absent when the service used MONGO_URL. */
  mongoUrl?: string;
  /** The local redis-server (its socket, or loopback TCP); absent when the service used REDIS_URL or a cluster. */
  redisUrl?: string;
  /** The service's QUEUE_PREFIX: an import must put its batches on the queues the workers read. */
  queuePrefix: string;
  startedAt: string;
}

export function serversFilePath(dataDir: string): string {
  return path.resolve(dataDir, SERVERS_FILE);
}

/** Writes the record for this process; the returned function removes it (only while it is still this process's). */
export function writeServersFile(dataDir: string, record: Omit<ServersRecord, 'pid' | 'startedAt'>): () => void {
  const file = serversFilePath(dataDir);
  mkdirSync(path.dirname(file), { recursive: true });
  const full: ServersRecord = { pid: process.pid, ...record, startedAt: new Date().toISOString() };
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(full, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, file);
  const remove = () => {
    process.removeListener('exit', remove);
    if (readServersFile(dataDir)?.pid !== process.pid) return;
    try {
      unlinkSync(file);
    } catch {
      // already gone
    }
  };
  // An exit that skips the shutdown (a second Ctrl-C) leaves no file either; a SIGKILL does, with a dead pid.
  process.on('exit', remove);
  return remove;
}

/** The record in DATA_DIR, or null when there is none or it cannot be read as one. */
export function readServersFile(dataDir: string): ServersRecord | null {
  let text: string;
  try {
    text = readFileSync(serversFilePath(dataDir), 'utf8');
  } catch {
    return null;
  }
  try {
    const parsed = JSON.parse(text) as Partial<ServersRecord>;
    if (!Number.isInteger(parsed.pid) || (parsed.pid ?? 0) <= 0 || typeof parsed.queuePrefix !== 'string') return null;
    return parsed as ServersRecord;
  } catch {
    return null;
  }
}

/** Whether a process with this pid exists (one of another user's counts: EPERM). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
