/**
 * `rating audit`: checks the ledger's promise on the whole database (src/shared/ledger/audit.ts) and
 * prints what it found. Exit status: 0 no difference, 1 differences, 2 could not run.
 */
import { ConfigError } from '../shared/config';
import { auditLedger } from '../shared/ledger/audit';
import { connectMongo, writeConcernOf } from '../shared/mongo';
import { commandConfig } from './servers';

export const USAGE = `usage: rating audit [--json]
  For every account: balance = opening balance + ledger entries (+ balance changes not yet settled),
  and the fees of its charged records = the ledger's charges minus refunds.
  --json   print the report as one JSON object
Reads MONGO_URL (and MONGO_DB) as the service uses, else the database of a running \`npm start\` with the same DATA_DIR.
Exit status: 0 no difference, 1 differences found, 2 the audit could not run.`;

export async function runAudit(args: string[]): Promise<number> {
  let config;
  try {
    config = await commandConfig({ redis: false });
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      return 2;
    }
    throw err;
  }
  if (!config?.mongoUrl) return 2;
  const mongo = await connectMongo(config.mongoUrl, config.mongoDb, { writeConcern: writeConcernOf(config) });
  try {
    const report = await auditLedger(mongo.collections);
    if (args.includes('--json')) {
      console.log(JSON.stringify(report, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value)));
    } else {
      console.log(`accounts:           ${report.accounts}`);
      console.log(`ledger entries:     ${report.ledger_entries}`);
      console.log(`engine records:     ${report.records}`);
      console.log(`pending markers:    ${report.pending_markers}`);
      console.log(`records in flight:  ${report.records_in_flight}`);
      console.log(`differences:        ${report.differences.length}`);
      for (const d of report.differences) {
        console.log(`  ${d.account_tag}: balance off by ${d.balance_difference}, records off by ${d.records_difference}`);
      }
    }
    return report.differences.length > 0 ? 1 : 0;
  } finally {
    await mongo.close();
  }
}
