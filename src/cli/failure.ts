import { ConfigError } from '../shared/infra/config';

/** A command line the command cannot run: printed with its usage. */
export class UsageError extends Error {}

/**
 * The exit status (2) and message of a failed command: a bad command line with the usage, a bad
 * configuration alone, anything else with `retry`, what the operator should do next.
 */
export function reportFailure(err: unknown, usage: string, what: string, retry: string): number {
  if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    console.error(`${(err as Error).message}\n\n${usage}`);
    return 2;
  }
  if (err instanceof ConfigError) {
    console.error(err.message);
    return 2;
  }
  console.error(`${what} failed: ${(err as Error).message}\n${retry}`);
  return 2;
}
