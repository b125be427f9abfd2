import { ChildProcess, spawn } from 'node:child_process';
import { ensureLauncherJar } from '../../src/shared/services/mongo-server';
import { freePort, withParentDeathSignal } from '../../src/shared/services/process-tools';

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
  const chosen = port ?? (await freePort('127.0.0.1'));
  const [command, args] = withParentDeathSignal('java', [
    '-XX:+UseParallelGC', '-Xss1m', '-jar', jar,
    '--host', '127.0.0.1', '--port', String(chosen), '--h2', file, '--no-stdin-watch',
  ]);
  // setpriv (if used) execs java, so child.pid is the JVM itself and SIGKILL reaches it directly.
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => reject(new Error(`mongo-server did not start in time: ${stderr.trim()}`)), 30000);
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.length > 20000) stderr = stderr.slice(-10000);
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const ready = /READY (\S+):(\d+)/.exec(stdout);
      if (ready) {
        clearTimeout(timer);
        resolve(`mongodb://${ready[1]}:${ready[2]}`);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`mongo-server exited with ${code ?? signal}: ${stderr.trim()}`));
    });
  });
  child.stdout!.resume();
  child.stderr!.resume();
  return { child, url, port: chosen };
}
