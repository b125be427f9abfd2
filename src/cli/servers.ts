import { MongoClient } from 'mongodb';
import { loadConfig, type Config } from '../shared/infra/config';
import { connectTo } from '../shared/infra/redis';
import { pidAlive, readServersFile, serversFilePath, type ServersRecord } from '../shared/infra/services/servers-file';

/** How long a server of a running `npm start` may take to answer before the command gives up on it. */
const PING_TIMEOUT_MS = 3000;

/** What a command talks to: MongoDB always, Redis too when it sends work to the workers or announces changes. */
export interface ServerNeeds {
  redis: boolean;
}

async function mongoAnswers(url: string): Promise<boolean> {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: PING_TIMEOUT_MS, connectTimeoutMS: PING_TIMEOUT_MS });
  try {
    await client.db('admin').command({ ping: 1 });
    return true;
  } catch {
    return false;
  } finally {
    await client.close().catch(() => undefined);
  }
}

async function redisAnswers(url: string): Promise<boolean> {
  const probe = connectTo(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: PING_TIMEOUT_MS });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/** The one-line hint when no running service can be used: how to start one, or what to set instead. */
function startHint(reason: string, needs: ServerNeeds): string {
  const variables = needs.redis ? 'MONGO_URL and REDIS_URL' : 'MONGO_URL';
  return `${reason}: start the service with \`npm start\` in another terminal from this folder (same DATA_DIR), or set ${variables} as the service uses them`;
}

/**
 * The running `npm start` whose local servers a command can use: its DATA_DIR/servers.json names a live
 * process whose servers (those the command needs) answer. Otherwise the reason, as one line.
 */
async function runningService(
  config: Config,
  needs: ServerNeeds,
  missing: { mongo: boolean; redis: boolean },
): Promise<ServersRecord | string> {
  const record = readServersFile(config.dataDir);
  if (!record) return startHint(`no service is running with DATA_DIR=${config.dataDir}`, needs);
  const file = serversFilePath(config.dataDir);
  // A process killed outright leaves its file behind; its pid is then gone (its servers die with it).
  if (!pidAlive(record.pid))
    return startHint(
      `no service is running with DATA_DIR=${config.dataDir} (${file} is left from pid ${record.pid}, which is gone)`,
      needs,
    );
  if ((missing.mongo && !record.mongoUrl) || (missing.redis && !record.redisUrl)) {
    const own = missing.mongo && !record.mongoUrl ? 'MONGO_URL' : 'REDIS_URL';
    return `the service running with DATA_DIR=${config.dataDir} (pid ${record.pid}) was given ${own} instead of a local server: set ${own} as it has`;
  }
  const answers = await Promise.all([
    missing.mongo ? mongoAnswers(record.mongoUrl as string) : true,
    missing.redis ? redisAnswers(record.redisUrl as string) : true,
  ]);
  if (answers.includes(false)) {
    return `the servers of the service running with DATA_DIR=${config.dataDir} (pid ${record.pid}, ${file}) do not answer: wait until it is ready, or start it again with \`npm start\``;
  }
  return record;
}

/**
 * The configuration a `rating` command runs with. MONGO_URL and REDIS_URL (or REDIS_CLUSTER_NODES) from
 * the environment win, as the service's own processes use them in production. Those unset are taken from
 * the local servers of a running `npm start` with the same DATA_DIR (DATA_DIR/servers.json), with its
 * database and queue prefix unless MONGO_DB / QUEUE_PREFIX are set; which ones is said in one line on
 * stderr. Null, with a one-line hint on stderr, when a server the command needs is neither set nor running.
 * Throws ConfigError on a bad setting, as loadConfig.
 */
export async function commandConfig(needs: ServerNeeds, env: NodeJS.ProcessEnv = process.env): Promise<Config | null> {
  const config = loadConfig(env);
  const missing = { mongo: !config.mongoUrl, redis: needs.redis && !config.redisUrl && !config.redisClusterNodes };
  if (!missing.mongo && !missing.redis) return config;
  const found = await runningService(config, needs, missing);
  if (typeof found === 'string') {
    console.error(found);
    return null;
  }
  const filled: NodeJS.ProcessEnv = { ...env };
  const used: string[] = [];
  if (missing.mongo) {
    filled.MONGO_URL = found.mongoUrl;
    used.push(`MongoDB ${found.mongoUrl}`);
  }
  if (missing.redis) {
    filled.REDIS_URL = found.redisUrl;
    filled.QUEUE_PREFIX ??= found.queuePrefix;
    used.push(`Redis ${found.redisUrl}`);
  }
  const resolved = loadConfig(filled);
  console.error(`using the local servers of npm start (pid ${found.pid}, DATA_DIR=${config.dataDir}): ${used.join(', ')}`);
  return resolved;
}

/** The MongoDB and Redis endpoints of a resolved configuration, as createContext takes them. */
export function serviceServers(config: Config): { mongoUrl: string; redisUrl: string | undefined } {
  if (!config.mongoUrl) throw new Error('serviceServers needs a configuration from commandConfig');
  return { mongoUrl: config.mongoUrl, redisUrl: config.redisUrl };
}
