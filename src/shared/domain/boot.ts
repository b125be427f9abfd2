import type { FastifyInstance } from 'fastify';
import { ConfigError, Config, loadConfig, sharedProcessProblem } from '../infra/config';
import { AppContext, createContext } from './context';
import { createLogger, Logger } from '../infra/logger';
import { startLocalServices } from '../infra/services/local-services';

export type Role = 'api' | 'agent' | 'worker';

export interface RoleHandle {
  close(): Promise<void>;
}

export type RoleStarter = (ctx: AppContext) => Promise<RoleHandle>;

export async function listen(app: FastifyInstance, host: string, port: number): Promise<RoleHandle> {
  await app.listen({ host, port });
  return { close: () => app.close() };
}

/**
 * Runs one process: reads the configuration (exiting with a clear message on a bad value), starts
 * the local Redis/MongoDB-wire servers when allowed and no URL is given, starts the roles, and on
 * SIGINT/SIGTERM stops them in reverse order: stop accepting, finish jobs in hand, close connections,
 * stop the local servers.
 */
export async function runProcess(name: string, roles: RoleStarter[], options: { localServices: boolean }): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const portProblem = options.localServices ? sharedProcessProblem(config) : null;
  if (portProblem) {
    process.stderr.write(`${portProblem}\n`);
    process.exit(2);
  }
  const logger: Logger = createLogger(config, name);
  if (!options.localServices && (!config.mongoUrl || (!config.redisUrl && !config.redisClusterNodes))) {
    logger.fatal(
      'MONGO_URL and REDIS_URL (or REDIS_CLUSTER_NODES) must be set when processes run separately (npm start runs everything with local servers)',
    );
    process.exit(2);
  }
  const started = Date.now();
  const services = await startLocalServices(config, { ephemeral: false, logger });
  const handles: RoleHandle[] = [];
  let ctx: AppContext | undefined;
  let stopping = false;

  const shutdown = async (signal: string, exitCode = 0) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    for (const handle of handles.reverse()) await handle.close().catch((err) => logger.error({ err }, 'close failed'));
    await ctx?.close().catch((err) => logger.error({ err }, 'closing connections failed'));
    await services.stop();
    logger.info('stopped');
    process.exit(exitCode);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  try {
    ctx = await createContext(config, services, logger);
    for (const start of roles) handles.push(await start(ctx));
    logger.info({ ms: Date.now() - started }, `${name} ready`);
  } catch (err) {
    // A refused start (bad setup, such as production without tokens) must fail the process manager's check.
    logger.fatal({ err }, `start failed: ${(err as Error).message}`);
    await shutdown('start-failure', 1);
  }
}
