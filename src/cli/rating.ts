#!/usr/bin/env node
/**
 * `rating <command>`: the operator's command line. Each command lives in its own module, loaded only
 * when used: `import` (src/cli/import), `rates` (src/cli/rates.ts), `audit` (src/cli/audit.ts), `rerate`
 * (src/cli/rerate.ts), `demo`
 * (src/cli/demo.ts) and `token` (src/cli/token.ts, run as its own script). Each talks to MONGO_URL and
 * REDIS_URL when set, else to the local servers of a running `npm start` with the same DATA_DIR
 * (src/cli/servers.ts).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

const USAGE = `usage: rating <command> [args]
  import FILE|-   import call detail records (CSV or JSON lines); rating import --help
  rates import DECK.csv --pricelist P --carrier C [--effective T] [--dry-run]
                  load a carrier's rate deck (CSV) from an effective time; rating rates --help
  audit           check every balance against its ledger and records; rating audit --help
  rerate --from T --to T [--dry-run]
                  rate charged calls again after a price change and correct their fees; rating rerate --help
  token ...       create, revoke and list API tokens; rating token help
  demo            create the demo carrier, pricelist, rates and accounts examples/calls.csv uses
Each command talks to MONGO_URL and REDIS_URL when set, else to the servers of a running \`npm start\`
started from the same folder (same DATA_DIR).`;

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case 'import': {
      const { runImport, reportFailure, USAGE: IMPORT_USAGE } = await import('./import/main');
      if (args.includes('--help') || args.includes('-h')) {
        console.log(IMPORT_USAGE);
        return 0;
      }
      return runImport(args).catch(reportFailure);
    }
    case 'rates': {
      const { runRates } = await import('./rates');
      return runRates(args);
    }
    case 'audit': {
      const { runAudit, USAGE: AUDIT_USAGE } = await import('./audit');
      if (args.includes('--help') || args.includes('-h')) {
        console.log(AUDIT_USAGE);
        return 0;
      }
      return runAudit(args).catch((err: unknown) => {
        console.error(`audit failed: ${(err as Error).message}`);
        return 2;
      });
    }
    case 'rerate': {
      const { runRerate } = await import('./rerate');
      return runRerate(args);
    }
    case 'demo': {
      const { runDemo, USAGE: DEMO_USAGE } = await import('./demo');
      if (args.includes('--help') || args.includes('-h')) {
        console.log(DEMO_USAGE);
        return 0;
      }
      return runDemo(args);
    }
    case 'token': {
      // token.ts runs on load and exits with its own status: run it as a child with our terminal.
      const child = spawn(process.execPath, [path.join(__dirname, 'token.js'), ...args], { stdio: 'inherit' });
      return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
    }
    case undefined:
    case 'help':
    case '--help':
      console.log(USAGE);
      return command ? 0 : 2;
    default:
      console.error(`unknown command "${command}"\n\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error((err as Error).message);
    process.exit(2);
  },
);
