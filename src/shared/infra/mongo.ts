import { Db, MongoClient } from 'mongodb';
import { installMongoWriteGuard } from './mongo-write-guard';
import { flushWaitingWrites } from './group-commands';

/** An open client and its database; the domain's typed collections over it: src/shared/domain/store.ts. */
export interface MongoConnection {
  /** The connection string it was opened with (another pool on the same server: connectMongo(url, ...)). */
  url: string;
  client: MongoClient;
  db: Db;
  close(): Promise<void>;
}

export interface MongoPoolOptions {
  /** Most connections of this client's pool (default 50). */
  maxPoolSize?: number;
  /** Shown by the server with each connection (which role opened it). */
  appName?: string;
  /** Emit the driver's command events (benchmarks and tests count and inspect the commands sent). */
  monitorCommands?: boolean;
  /** Write concern of every write of this client (default majority + journal): config MONGO_WRITE_CONCERN, MONGO_JOURNAL. */
  writeConcern?: MongoWriteConcern;
}

/** What acknowledges a write: docs/AGENT.md "Money guarantees", docs/SCALING.md. */
export interface MongoWriteConcern {
  w: number | 'majority';
  journal: boolean;
}

/** The write concern a process's configuration asks for. */
export function writeConcernOf(config: { mongoWriteConcern: number | 'majority'; mongoJournal: boolean }): MongoWriteConcern {
  return { w: config.mongoWriteConcern, journal: config.mongoJournal };
}

/**
 * One client and its connection pool. A process holds one, shared by its roles; the management API
 * opens its own (API_MONGO_POOL_SIZE, src/api/app.ts) so that its queries, however many documents they
 * ask for, wait in their own pool and never in front of the agent's and the workers' operations.
 */
export async function openMongo(url: string, dbName: string, options: MongoPoolOptions = {}): Promise<MongoConnection> {
  installMongoWriteGuard();
  // int64 values come back as bigint, so balances never pass through a float.
  const client = new MongoClient(url, {
    useBigInt64: true,
    serverSelectionTimeoutMS: 10000,
    maxPoolSize: options.maxPoolSize ?? 50,
    ...(options.appName ? { appName: options.appName } : {}),
    ...(options.monitorCommands ? { monitorCommands: true } : {}),
    // Client-level, so every write of the service has it: nearly all of them move money or decide
    // its fate (balances, ledger, records, outcomes, import batches), and the few that do not (tokens,
    // rating data) are rare. It overrides any w/journal in the URL.
    writeConcern: options.writeConcern ?? { w: 'majority', journal: true },
  });
  await client.connect();
  const db = client.db(dbName);
  return {
    url,
    client,
    db,
    // Grouped writes still waiting for company (a charged mark) leave first: group-commands.ts.
    close: async () => {
      await flushWaitingWrites();
      await client.close();
    },
  };
}

export async function pingMongo(mongo: Pick<MongoConnection, 'db'>): Promise<boolean> {
  try {
    await mongo.db.command({ ping: 1 });
    return true;
  } catch {
    return false;
  }
}
