import net from 'node:net';
import type { Redis } from 'ioredis';

/**
 * Redis MONITOR on a socket of its own. ioredis's `monitor()` marks its connection "monitoring" one
 * microtask after MONITOR's `+OK`; a command line arriving in the same read as that `+OK` (any other
 * client's command on a shared server) is taken for a reply nobody asked for, and the connection fails
 * with "Command queue state error". Here the `+OK` and every line after it are read in order.
 */
export interface RedisMonitor {
  /**
   * Every command Redis runs from now on, in the order it runs them: name (lower case) first. `byScript`:
   * run by a Lua script (MONITOR's `[0 lua]`), not sent by a client.
   */
  onCommand(listener: (args: string[], byScript: boolean) => void): void;
  close(): void;
}

/** Opens MONITOR on the server `redis` is connected to (TCP or Unix socket); resolves once it is on. */
export function openMonitor(redis: Redis): Promise<RedisMonitor> {
  const { path, host, port } = redis.options;
  const socket = path ? net.createConnection(path) : net.createConnection(port ?? 6379, host ?? '127.0.0.1');
  const listeners: ((args: string[], byScript: boolean) => void)[] = [];
  let buffered = '';
  let on = false;
  return new Promise((resolve, reject) => {
    // Before MONITOR is on, an error fails the open; after, the test sees it as missing commands.
    socket.on('error', (err) => {
      if (!on) reject(err);
    });
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      let end: number;
      while ((end = buffered.indexOf('\r\n')) >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (!on) {
          if (line !== '+OK') {
            socket.destroy();
            reject(new Error(`MONITOR refused: ${line}`));
            return;
          }
          on = true;
          resolve({ onCommand: (listener) => listeners.push(listener), close: () => socket.destroy() });
          continue;
        }
        const args = commandArgs(line);
        const byScript = line.includes(' lua] "');
        if (args.length > 0) for (const listener of listeners) listener(args, byScript);
      }
    });
    socket.write('MONITOR\r\n');
  });
}

/** `+<time> [<db> <client>] "cmd" "arg" ...` to its arguments, unquoted (Redis escapes `\` `"` and bytes). */
function commandArgs(line: string): string[] {
  const start = line.indexOf('] "');
  if (!line.startsWith('+') || start < 0) return [];
  const args = [...line.slice(start + 2).matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => unquote(m[1]));
  if (args.length > 0) args[0] = args[0].toLowerCase();
  return args;
}

function unquote(quoted: string): string {
  return quoted.replace(/\\(x[0-9a-f]{2}|.)/g, (_, e: string) => {
    if (e.startsWith('x') && e.length === 3) return String.fromCharCode(parseInt(e.slice(1), 16));
    return ({ n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b' } as Record<string, string>)[e] ?? e;
  });
}
