/**
 * Token administration: `npm run token -- create --name NAME --scopes read,write`, `revoke <name|id>`,
 * `list`. Reads the service's configuration (MONGO_URL, MONGO_DB) from the environment, else uses the
 * database of a running `npm start` with the same DATA_DIR (src/cli/servers.ts). The secret
 * is printed once, alone on stdout, so it can be captured: TOKEN=$(npm run -s token -- create ...).
 */
import { parseArgs } from 'node:util';
import { createToken, ensureTokenIndexes, listTokens, revokeToken, TokenNameTaken } from '../shared/infra/auth/token-store';
import { parseScopes, validTokenName } from '../shared/infra/auth/token-format';
import { Config, ConfigError } from '../shared/infra/config';
import { writeConcernOf } from '../shared/infra/mongo';
import { connectMongo, Mongo } from '../shared/domain/store';
import { commandConfig } from './servers';

const USAGE = `usage:
  npm run token -- create --name NAME --scopes read,write,agent
  npm run token -- revoke NAME|ID
  npm run token -- list
Uses MONGO_URL (and MONGO_DB when the URL names no database) as the service does, else the database
of a running \`npm start\` with the same DATA_DIR.`;

class UsageError extends Error {}

async function create(mongo: Mongo, args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { name: { type: 'string' }, scopes: { type: 'string' } }, strict: true });
  if (!values.name || !validTokenName(values.name)) throw new UsageError('--name is required: 1-64 letters, digits, "_", "." or "-"');
  const scopes = parseScopes(values.scopes ?? '');
  if (scopes.problems.length > 0) throw new UsageError(`--scopes: ${scopes.problems.join('; ')}`);
  const { token, secret } = await createToken(mongo.db, values.name, scopes.scopes);
  console.error(`created token "${token.name}" (id ${token._id}) with scopes ${token.scopes.join(',')}`);
  console.error('the secret below is shown only now; store it safely:');
  console.log(secret);
  return 0;
}

async function revoke(mongo: Mongo, args: string[]): Promise<number> {
  if (args.length !== 1) throw new UsageError('revoke takes one token name or id');
  const count = await revokeToken(mongo.db, args[0]);
  if (count === 0) {
    console.error(`no active token named or with id "${args[0]}"`);
    return 1;
  }
  console.log(`revoked ${count} token(s) "${args[0]}"; running services stop accepting it within AUTH_CACHE_MS`);
  return 0;
}

async function list(mongo: Mongo, config: Config): Promise<number> {
  const rows = (await listTokens(mongo.db)).map((t) => [
    t._id,
    t.name,
    t.scopes.join(','),
    t.created_at.toISOString(),
    t.revoked_at ? `revoked ${t.revoked_at.toISOString()}` : 'active',
  ]);
  for (const t of config.bootstrapTokens) rows.push([`env:${t.name}`, t.name, t.scopes.join(','), '-', 'active (RATING_TOKENS)']);
  if (rows.length === 0) {
    console.log('no tokens');
    return 0;
  }
  const header = ['ID', 'NAME', 'SCOPES', 'CREATED', 'STATE'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  for (const row of [header, ...rows])
    console.log(
      row
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    );
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (!command || command === 'help' || command === '--help') {
    console.log(USAGE);
    return command ? 0 : 2;
  }
  if (!['create', 'revoke', 'list'].includes(command)) throw new UsageError(`unknown command "${command}"`);
  const config = await commandConfig({ redis: false });
  if (!config?.mongoUrl) return 2;
  const mongo = await connectMongo(config.mongoUrl, config.mongoDb, { writeConcern: writeConcernOf(config) });
  try {
    await ensureTokenIndexes(mongo.db);
    if (command === 'create') return await create(mongo, args);
    if (command === 'revoke') return await revoke(mongo, args);
    return await list(mongo, config);
  } finally {
    await mongo.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) {
      console.error(`${err.message}\n\n${USAGE}`);
      process.exit(2);
    }
    if (err instanceof ConfigError || err instanceof TokenNameTaken) {
      console.error(err.message);
      process.exit(err instanceof ConfigError ? 2 : 1);
    }
    // parseArgs reports unknown options with a TypeError carrying an ERR_PARSE_ARGS_* code.
    if ((err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`${(err as Error).message}\n\n${USAGE}`);
      process.exit(2);
    }
    console.error(`token: ${(err as Error).message}`);
    process.exit(1);
  },
);
