import { createRequire } from 'node:module';
import { MongoNetworkError } from 'mongodb';

/**
 * Works around a hang in the MongoDB Node driver (6.22 as used here; 7.9 has the same code): a command
 * written to a socket that is already destroyed waits forever. `Connection.writeCommand` calls
 * `socket.write`, and when that returns false it waits for 'drain' or 'error'. A destroyed socket
 * returns false from `write` and emits neither, and the connection's own close handling only fails a
 * command that is already reading its reply. The socket can be destroyed in that gap when the server
 * goes away (a MongoDB restart, a failover), so the command, and every caller waiting on it, never
 * settles: in the chaos test a worker held all its jobs, locks renewed, charging nothing, until it was
 * restarted (docs/DECISIONS.md, "A command written to a lost connection").
 *
 * The guard fails such a write with the network error the driver gives for a closed connection, which
 * every caller already handles: a write's outcome is unknown and retried idempotently; a read is retried
 * by the driver on a fresh connection. It wraps the driver's method and changes nothing else. The
 * method is internal, so its presence is checked when the guard is installed: a driver that moved it
 * fails the process at start instead of running without the guard.
 */

interface DriverConnection {
  id: number | '<monitor>';
  address: string;
  socket: NodeJS.EventEmitter & { destroyed: boolean };
  writeCommand(this: DriverConnection, command: unknown, options: unknown): Promise<void>;
}

let installed = false;

export function installMongoWriteGuard(): void {
  if (installed) return;
  const requireFromHere = createRequire(__filename);
  const { Connection } = requireFromHere('mongodb/lib/cmap/connection') as { Connection?: { prototype: DriverConnection } };
  const original = Connection?.prototype.writeCommand;
  if (typeof original !== 'function') {
    throw new Error(
      'mongodb driver: Connection.prototype.writeCommand not found; re-check src/shared/infra/mongo-write-guard.ts against this driver version',
    );
  }
  Connection!.prototype.writeCommand = function guardedWriteCommand(
    this: DriverConnection,
    command: unknown,
    options: unknown,
  ): Promise<void> {
    const { socket } = this;
    const lost = () => new MongoNetworkError(`connection ${this.id} to ${this.address} closed`);
    if (socket.destroyed) return Promise.reject(lost());
    return new Promise<void>((resolve, reject) => {
      // 'close' follows every destroy (on the next tick), also one that happens while the write waits.
      const onClose = () => reject(lost());
      socket.once('close', onClose);
      original
        .call(this, command, options)
        .then(resolve, reject)
        .finally(() => socket.off('close', onClose));
    });
  };
  installed = true;
}
