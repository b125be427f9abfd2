/**
 * `rating audit`: checks the ledger's promise on the whole database (src/shared/domain/ledger/audit.ts) and
 * prints what it found. Exit status: 0 no difference, 1 differences or call problems, 2 could not run.
 */
import { ConfigError } from '../shared/infra/config';
import { auditLedger } from '../shared/domain/ledger/audit';
import { writeConcernOf } from '../shared/infra/mongo';
import { connectMongo } from '../shared/domain/store';
import { commandConfig } from './servers';

export const USAGE = `usage: rating audit [--json]
  For every account: balance = opening balance + ledger entries (+ balance changes not yet settled),
  and the fees of its charged records = the ledger's charges minus refunds. Then every call: a charged
  record has its charge and no refund, a rolled-back call has no record left, a running call no record.
  Exact while the service runs: what moves between its reads is read again.
  --json   print the report as one JSON object
Reads MONGO_URL (and MONGO_DB) as the service uses, else the database of a running \`npm start\` with the same DATA_DIR.
Exit status: 0 no difference, 1 differences or call problems found, 2 the audit could not run.`;

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
      console.log(`call problems:      ${report.calls.length}`);
      for (const c of report.calls) {
        console.log(
          `  ${c.account_tag} ${c.transaction_tag}: ${c.problem}${c.record_id ? ` (record ${c.record_id})` : ''}${c.entry_id ? ` (entry ${c.entry_id})` : ''}`,
        );
      }
    }
    return report.differences.length > 0 || report.calls.length > 0 ? 1 : 0;
  } finally {
    await mongo.close();
  }
}
