import { createServer } from 'node:net';

/**
 * A port for a server a test starts, chosen below the kernel's ephemeral range (32768-60999 by default on
 * Linux). A port from `listen(0)` is given back to the pool when the probe closes it, and the service's
 * own local servers (src/shared/infra/services) take theirs the same way: the kernel could hand the very
 * same port to the MongoDB-wire server while the test's API waited to bind it (a flake seen in CI). Ports
 * picked here are never handed out by the kernel, and each is probed free before it is returned.
 */
export async function testPort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await isFree(port, host)) return port;
  }
  throw new Error('no free port found between 20000 and 32000');
}

function isFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/** `count` distinct ports, as testPort. */
export async function testPorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await testPort(host));
  return [...ports];
}
