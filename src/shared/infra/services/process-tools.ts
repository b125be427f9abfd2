import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { existsSync } from 'node:fs';
import path from 'node:path';

export function which(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, command);
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * Children of the service must not outlive it, even when it is killed with SIGKILL:
 * `setpriv --pdeathsig` (util-linux) makes the kernel send SIGTERM to the child when we die.
 */
export function withParentDeathSignal(command: string, args: string[]): [string, string[]] {
  const setpriv = process.platform === 'linux' ? which('setpriv') : undefined;
  if (!setpriv) return [command, args];
  const probe = spawnSync(setpriv, ['--pdeathsig', 'TERM', 'true']);
  return probe.status === 0 ? [setpriv, ['--pdeathsig', 'TERM', command, ...args]] : [command, args];
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
