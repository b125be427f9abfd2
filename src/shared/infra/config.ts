/**
 * Configuration is read from the environment once, at start, and validated as a whole so that a
 * bad value stops the process with one clear message instead of failing later mid-call.
 */

import { ConnectionString } from 'mongodb-connection-string-url';
import { BootstrapToken, MIN_SECRET_LENGTH, parseBootstrapTokens } from './auth/token-format';
import { parseRedisNodes, RedisNode } from './redis-nodes';

/**
 * Seconds a proxy may overrun the granted units when it follows them (the no-overdraft rule,
 * AUTHORIZATION_HEADROOM_SECONDS): its dialog timer ticks once a second, so the cut comes up to 1 s
 * late, and the end is stamped up to 1 s after that (the proxy's or the agent's latency); a started
 * second is billed whole.
 */
export const DEFAULT_HEADROOM_SECONDS = 2;

export type NodeEnv = 'development' | 'production' | 'test';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  nodeEnv: NodeEnv;
  host: string;
  apiPort: number;
  agentPort: number;
  /** Health (and metrics) port of a standalone worker process; 0 picks a free port. */
  workerPort: number;
  /** Undefined means: start a local MongoDB-wire server under dataDir. */
  mongoUrl: string | undefined;
  mongoDb: string;
  /** Write concern of every write (MONGO_WRITE_CONCERN: `majority` or a number of members, 0 refused). */
  mongoWriteConcern: number | 'majority';
  /** MONGO_JOURNAL: a write is acknowledged only once in the on-disk journal. */
  mongoJournal: boolean;
  /** Undefined means: start a local redis-server under dataDir. */
  redisUrl: string | undefined;
  /** Seed nodes of a Redis Cluster (REDIS_CLUSTER_NODES); set, it replaces redisUrl (docs/OPERATIONS.md). */
  redisClusterNodes: RedisNode[] | undefined;
  queuePrefix: string;
  dataDir: string;
  logLevel: LogLevel;
  workerConcurrency: number;
  /**
   * How long processing's grouped commands wait for other calls to share them (PROCESSING_WINDOW_MS);
   * 0, the default, sends them at once (docs/DESIGN.md section 4: no batching delay unless configured).
   */
  processingWindowMs: number;
  /**
   * PROCESSING_INLINE: a worker process that runs the processing queue charges the calls its end jobs
   * ended itself, right after answering, instead of queueing them (issue 36). `false`: every ended call
   * goes through the processing queue (to pause charging with the queue, or to charge on other machines).
   */
  processingInline: boolean;
  /** Processing jobs each worker process runs at once (PROCESSING_CONCURRENCY; a window holds jobs longer). */
  processingConcurrency: number;
  agentTimeoutMs: number;
  /**
   * How long, once AGENT_TIMEOUT_MS is over, the agent may spend learning or recording an operation's
   * fate (AGENT_ABANDON_MS): every answer comes within the two together (docs/AGENT.md).
   */
  agentAbandonMs: number;
  longCallSeconds: number;
  /** How long a worker's lock on a job lasts; a job whose worker died is retried after it lapses. */
  jobLockMs: number;
  /** How often the maintenance queue scans for stale and exhausted calls. */
  longCallScanSeconds: number;
  /** How often prepaid calls are checked for an exhausted balance ("end this call"): seconds, not a minute. */
  endCallScanSeconds: number;
  /** How long an authorization's concurrency reservation holds its slot unless begin takes it over. */
  reservationSeconds: number;
  /** Seconds of headroom max_available_units leaves for the proxy's timer and end stamp (no overdraft). */
  authorizationHeadroomSeconds: number;
  /** Most calls one recordTransactions request may carry (docs/IMPORTS.md). */
  recordBatchMax: number;
  /** How often a worker runs the ledger audit and publishes its figures as metrics; 0 never. */
  auditIntervalSeconds: number;
  /**
   * How long agent decisions (agent_outcomes) are kept once the states they decide about are settled
   * (OUTCOME_RETENTION_SECONDS): the recovery sweep deletes older ones, never before it settled them.
   */
  outcomeRetentionSeconds: number;

  /** Tokens from RATING_TOKENS, hashed at load (docs/OPERATIONS.md). */
  bootstrapTokens: BootstrapToken[];
  /** How long a token lookup (hit or miss) is cached in memory; a revocation takes at most this long. */
  authCacheMs: number;
  /** Requests per window per token (per IP when anonymous); 0 disables the limit. */
  rateLimitMax: number;
  rateLimitWindowMs: number;
  graphqlMaxDepth: number;
  /** Most fields one GraphQL operation may select, fragments expanded (src/shared/infra/graphql/limits.ts). */
  graphqlMaxFields: number;
  /** Budget of one GraphQL operation: fields, each list field's selection times its page size. */
  graphqlMaxCost: number;
  /** Server-side time limit (maxTimeMS) of the management API's list and count queries. */
  mongoMaxTimeMs: number;
  /** GraphQL requests the management API runs at once per process; 0 no limit (src/api/query-gate.ts). */
  apiMaxConcurrentQueries: number;
  /** How long an API GraphQL request waits for a turn before it is refused (429 RATE_LIMITED). */
  apiQueryWaitMs: number;
  /** Connections of the management API's own MongoDB pool; 0 shares the process's pool (agent, workers). */
  apiMongoPoolSize: number;
  /** Single-machine mode: the API runs in a worker thread of its own (src/api/thread.ts); false: on the main thread. */
  apiThread: boolean;
  bodyLimitBytes: number;

  /** Unset: that alert channel is skipped. */
  smtpUrl: string | undefined;
  alertEmailFrom: string;
  smsGatewayUrl: string | undefined;
  alertWebhookUrl: string | undefined;
  alertWebhookSecret: string | undefined;
  alertHttpTimeoutMs: number;
  /** An unchanged alert condition is repeated at most once per this period. */
  alertRepeatSeconds: number;
  /** Global low-balance threshold in minor units; 0 means only below-zero alerts. */
  lowBalanceThreshold: bigint;
}

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const NODE_ENVS: readonly NodeEnv[] = ['development', 'production', 'test'];

type Env = Record<string, string | undefined>;

class Reader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  raw(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  string(name: string, fallback: string): string {
    return this.raw(name) ?? fallback;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!/^-?\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      this.problems.push(`${name}=${JSON.stringify(value)} must be an integer from ${min} to ${max}`);
      return fallback;
    }
    return Number(value);
  }

  bigint(name: string, fallback: bigint): bigint {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!/^-?\d{1,18}$/.test(value)) {
      this.problems.push(`${name}=${JSON.stringify(value)} must be an integer (minor currency units)`);
      return fallback;
    }
    return BigInt(value);
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(value)) {
      this.problems.push(`${name}=${JSON.stringify(value)} must be one of ${allowed.join(', ')}`);
      return fallback;
    }
    return value as T;
  }

  url(name: string, protocols: string[]): string | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    try {
      const parsed = new URL(value);
      if (!protocols.includes(parsed.protocol)) {
        this.problems.push(`${name} must use ${protocols.join(' or ')} (got ${parsed.protocol})`);
      } else if (parsed.protocol !== 'unix:' && parsed.hostname === '') {
        // Drivers given no host quietly fall back to localhost: a typo would reach the wrong server.
        this.problems.push(`${name} names no host (got ${JSON.stringify(value)})`);
      }
    } catch {
      this.problems.push(`${name} is not a valid URL`);
    }
    return value;
  }

  /**
   * A MongoDB connection string, read as the driver reads it: a replica set lists several host:port
   * pairs (`mongodb://m1:27017,m2:27017/rating?replicaSet=rs0`), which a WHATWG URL cannot hold.
   */
  mongoUrl(name: string): { url: string; database: string | undefined } | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    if (!/^mongodb(\+srv)?:\/\//.test(value)) {
      this.problems.push(`${name} must use mongodb: or mongodb+srv: (got ${JSON.stringify(value.split(':')[0] + ':')})`);
      return { url: value, database: undefined };
    }
    try {
      const parsed = new ConnectionString(value);
      const badHost = parsed.hosts.find((host) => !isHostAndPort(host));
      if (badHost !== undefined) throw new Error(`host ${badHost}`);
      const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
      return { url: value, database: database === '' ? undefined : database };
    } catch (err) {
      this.problems.push(`${name} is not a valid MongoDB connection string (${(err as Error).message})`);
      return { url: value, database: undefined };
    }
  }
}

/** `host`, `host:port` or `[v6]:port`, the port from 1 to 65535. */
function isHostAndPort(host: string): boolean {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^\s:/[\]]+)(?::(\d{1,5}))?$/.exec(host);
  return match !== null && (match[2] === undefined || (Number(match[2]) >= 1 && Number(match[2]) <= 65535));
}

/** MONGO_WRITE_CONCERN: `majority` (default) or 1..50 members; 0 (unacknowledged) would lose charges silently. */
function writeConcern(r: Reader): number | 'majority' {
  const value = r.raw('MONGO_WRITE_CONCERN');
  if (value === undefined || value === 'majority') return 'majority';
  if (/^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= 50) return Number(value);
  r.problems.push(`MONGO_WRITE_CONCERN=${JSON.stringify(value)} must be "majority" or a number of members from 1 to 50`);
  return 'majority';
}

/**
 * What is wrong with a configuration for one process running the API and the agent side by side
 * (`npm start`): the second server would fail to bind after the first had started. Separate processes
 * (containers) may share a port number.
 */
export function sharedProcessProblem(config: Pick<Config, 'apiPort' | 'agentPort'>): string | null {
  return config.apiPort === config.agentPort && config.apiPort !== 0
    ? `API_PORT and AGENT_PORT are both ${config.apiPort}: the management API and the agent each need a port of their own`
    : null;
}

export function loadConfig(env: Env = process.env): Config {
  const r = new Reader(env);
  const nodeEnv = r.oneOf('NODE_ENV', NODE_ENVS, 'development');
  const mongo = r.mongoUrl('MONGO_URL');
  const workerConcurrency = r.int('WORKER_CONCURRENCY', 16, 1, 1000);
  const config: Config = {
    nodeEnv,
    host: r.string('HOST', '127.0.0.1'),
    apiPort: r.int('API_PORT', 4000, 0, 65535),
    agentPort: r.int('AGENT_PORT', 4001, 0, 65535),
    workerPort: r.int('METRICS_PORT', 9464, 0, 65535),
    mongoUrl: mongo?.url,
    mongoDb: r.string('MONGO_DB', mongo?.database ?? 'rating'),
    mongoWriteConcern: writeConcern(r),
    mongoJournal: r.oneOf('MONGO_JOURNAL', ['true', 'false'], 'true') === 'true',
    redisUrl: r.url('REDIS_URL', ['redis:', 'rediss:', 'unix:']),
    redisClusterNodes: undefined,
    queuePrefix: r.string('QUEUE_PREFIX', 'rating'),
    dataDir: r.string('DATA_DIR', './.data'),
    logLevel: r.oneOf('LOG_LEVEL', LOG_LEVELS, nodeEnv === 'test' ? 'warn' : 'info'),
    workerConcurrency,
    processingWindowMs: r.int('PROCESSING_WINDOW_MS', 0, 0, 1000),
    processingInline: r.oneOf('PROCESSING_INLINE', ['true', 'false'], 'true') === 'true',
    processingConcurrency: r.int('PROCESSING_CONCURRENCY', workerConcurrency, 1, 1000),
    agentTimeoutMs: r.int('AGENT_TIMEOUT_MS', 5000, 100, 120000),
    agentAbandonMs: r.int('AGENT_ABANDON_MS', 1500, 100, 60000),
    longCallSeconds: r.int('LONG_CALL_SECONDS', 10800, 60, 31 * 86400),
    jobLockMs: r.int('JOB_LOCK_MS', 30000, 1000, 600000),
    longCallScanSeconds: r.int('LONG_CALL_SCAN_SECONDS', 60, 1, 86400),
    endCallScanSeconds: r.int('END_CALL_SCAN_SECONDS', 5, 1, 3600),
    reservationSeconds: r.int('RESERVATION_SECONDS', 60, 1, 3600),
    authorizationHeadroomSeconds: r.int('AUTHORIZATION_HEADROOM_SECONDS', DEFAULT_HEADROOM_SECONDS, 0, 60),
    recordBatchMax: r.int('RECORD_BATCH_MAX', 1000, 1, 10000),
    auditIntervalSeconds: r.int('AUDIT_INTERVAL_SECONDS', 3600, 0, 31 * 86400),
    outcomeRetentionSeconds: r.int('OUTCOME_RETENTION_SECONDS', 86400, 60, 366 * 86400),
    bootstrapTokens: [],
    authCacheMs: r.int('AUTH_CACHE_MS', 5000, 0, 60000),
    rateLimitMax: r.int('RATE_LIMIT_MAX', 60000, 0, 100_000_000),
    rateLimitWindowMs: r.int('RATE_LIMIT_WINDOW_MS', 60000, 100, 86_400_000),
    graphqlMaxDepth: r.int('GRAPHQL_MAX_DEPTH', 12, 2, 100),
    graphqlMaxFields: r.int('GRAPHQL_MAX_FIELDS', 500, 10, 100_000),
    graphqlMaxCost: r.int('GRAPHQL_MAX_COST', 200_000, 100, 1_000_000_000),
    mongoMaxTimeMs: r.int('MONGO_MAX_TIME_MS', 10_000, 100, 600_000),
    apiMaxConcurrentQueries: r.int('API_MAX_CONCURRENT_QUERIES', 2, 0, 10_000),
    apiQueryWaitMs: r.int('API_QUERY_WAIT_MS', 10_000, 0, 600_000),
    apiMongoPoolSize: r.int('API_MONGO_POOL_SIZE', 10, 0, 1000),
    apiThread: r.int('API_THREAD', 1, 0, 1) === 1,
    bodyLimitBytes: r.int('BODY_LIMIT_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
    smtpUrl: r.url('SMTP_URL', ['smtp:', 'smtps:']),
    alertEmailFrom: r.string('ALERT_EMAIL_FROM', 'Call rating <rating-alerts@localhost>'),
    smsGatewayUrl: r.url('SMS_GATEWAY_URL', ['http:', 'https:']),
    alertWebhookUrl: r.url('ALERT_WEBHOOK_URL', ['http:', 'https:']),
    alertWebhookSecret: r.raw('ALERT_WEBHOOK_SECRET'),
    alertHttpTimeoutMs: r.int('ALERT_HTTP_TIMEOUT_MS', 10000, 100, 120000),
    alertRepeatSeconds: r.int('ALERT_REPEAT_SECONDS', 3600, 1, 31 * 86400),
    lowBalanceThreshold: r.bigint('LOW_BALANCE_THRESHOLD', 0n),
  };
  const tokens = parseBootstrapTokens(r.raw('RATING_TOKENS'));
  config.bootstrapTokens = tokens.tokens;
  r.problems.push(...tokens.problems);
  // An unsigned webhook could be forged by anyone who learns the URL; refuse to send one.
  if (config.alertWebhookUrl && !config.alertWebhookSecret)
    r.problems.push('ALERT_WEBHOOK_SECRET is required when ALERT_WEBHOOK_URL is set');
  // The receiver checks the signature with it: as hard to guess as an API token's secret.
  if (config.alertWebhookSecret !== undefined && config.alertWebhookSecret.length < MIN_SECRET_LENGTH)
    r.problems.push(`ALERT_WEBHOOK_SECRET must be at least ${MIN_SECRET_LENGTH} characters`);
  const clusterNodes = r.raw('REDIS_CLUSTER_NODES');
  if (clusterNodes !== undefined) {
    const parsed = parseRedisNodes('REDIS_CLUSTER_NODES', clusterNodes);
    r.problems.push(...parsed.problems);
    config.redisClusterNodes = parsed.nodes.length > 0 ? parsed.nodes : undefined;
    if (config.redisUrl)
      r.problems.push(
        'REDIS_URL and REDIS_CLUSTER_NODES are both set: set REDIS_URL for one Redis server or REDIS_CLUSTER_NODES for a Redis Cluster, not both',
      );
  }
  // A server on this machine by its socket (src/shared/infra/redis.ts): the path must be there to connect to.
  if (config.redisUrl?.startsWith('unix:') && !/^unix:\/\/\/./.test(config.redisUrl)) {
    r.problems.push("REDIS_URL unix: needs the socket's absolute path, e.g. unix:///run/redis/redis.sock");
  }
  if (/[:{}]/.test(config.queuePrefix)) r.problems.push('QUEUE_PREFIX must not contain ":", "{" or "}"');
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}
