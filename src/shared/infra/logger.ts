import pino, { Logger } from 'pino';
import type { Config } from './config';

export type { Logger };

export function createLogger(config: Pick<Config, 'logLevel'>, name: string): Logger {
  return pino({
    name,
    level: config.logLevel,
    formatters: { level: (label) => ({ level: label }) },
    serializers: { err: pino.stdSerializers.err },
  });
}
