/**
 * Configuration is read from the environment once, at start, and validated as a whole so that a
 * bad value stops the process with one clear message instead of failing later mid-call.
 */

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
  /** Undefined means: start a local redis-server under dataDir. */
  redisUrl: string | undefined;
  queuePrefix: string;
  dataDir: string;
  logLevel: LogLevel;
  workerConcurrency: number;
  agentTimeoutMs: number;
  longCallSeconds: number;
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
      }
    } catch {
      this.problems.push(`${name} is not a valid URL`);
    }
    return value;
  }
}

function databaseFromUrl(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const name = new URL(url).pathname.replace(/^\//, '');
    return name === '' ? undefined : decodeURIComponent(name);
  } catch {
    return undefined;
  }
}

export function loadConfig(env: Env = process.env): Config {
  const r = new Reader(env);
  const nodeEnv = r.oneOf('NODE_ENV', NODE_ENVS, 'development');
  const mongoUrl = r.url('MONGO_URL', ['mongodb:', 'mongodb+srv:']);
  const config: Config = {
    nodeEnv,
    host: r.string('HOST', '127.0.0.1'),
    apiPort: r.int('API_PORT', 4000, 0, 65535),
    agentPort: r.int('AGENT_PORT', 4001, 0, 65535),
    workerPort: r.int('METRICS_PORT', 9464, 0, 65535),
    mongoUrl,
    mongoDb: r.string('MONGO_DB', databaseFromUrl(mongoUrl) ?? 'rating'),
    redisUrl: r.url('REDIS_URL', ['redis:', 'rediss:']),
    queuePrefix: r.string('QUEUE_PREFIX', 'rating'),
    dataDir: r.string('DATA_DIR', './.data'),
    logLevel: r.oneOf('LOG_LEVEL', LOG_LEVELS, nodeEnv === 'test' ? 'warn' : 'info'),
    workerConcurrency: r.int('WORKER_CONCURRENCY', 16, 1, 1000),
    agentTimeoutMs: r.int('AGENT_TIMEOUT_MS', 5000, 100, 120000),
    longCallSeconds: r.int('LONG_CALL_SECONDS', 10800, 60, 31 * 86400),
  };
  if (/[:{}]/.test(config.queuePrefix)) r.problems.push('QUEUE_PREFIX must not contain ":", "{" or "}"');
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}
