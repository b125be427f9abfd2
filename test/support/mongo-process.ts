import { ChildProcess, spawn } from 'node:child_process';
import { ensureLauncherJar, launcherReady } from '../../src/shared/infra/services/mongo-server';
import { withParentDeathSignal } from '../../src/shared/infra/services/process-tools';
import { testPort } from './ports';

export interface MongoProcess {
  child: ChildProcess;
  url: string;
  port: number;
}

/**
 * A MongoDB-wire server of its own (the launcher jar, persistent `--h2 FILE`), for tests that stop,
 * kill or restart the store; `port` lets a restart come back where clients expect it.
 */
export async function startH2MongoServer(file: string, port?: number): Promise<MongoProcess> {
  const jar = ensureLauncherJar();
  const chosen = port ?? (await testPort('127.0.0.1'));
  const [command, args] = withParentDeathSignal('java', [
    '-XX:+UseParallelGC',
    '-Xss1m',
    '-jar',
    jar,
    '--host',
    '127.0.0.1',
    '--port',
    String(chosen),
    '--h2',
    file,
    '--no-stdin-watch',
  ]);
  // setpriv (if used) execs java, so child.pid is the JVM itself and SIGKILL reaches it directly.
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await launcherReady(child, 30000);
  return { child, url, port: chosen };
}
