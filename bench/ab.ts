/**
 * bench:ab (issue 36) — the agent sweep of a baseline commit and of this checkout, back to back on the
 * same machine: machines differ by a factor of two from day to day, so a speed claim is a ratio of two
 * runs made minutes apart, never a figure from another day.
 *
 *   npm run bench:ab -- [--baseline 47cb484] [--runs 3] [--keep] [-- bench:agent options, default --sweep]
 *
 * The baseline is checked out into a temporary git worktree that shares this checkout's node_modules
 * and the built MongoDB-wire server (neither changed in what the baseline runs), and built there with
 * its own `npm run build`. Then, `--runs` times, the baseline's `bench/agent.ts` and this checkout's run
 * one after the other (A B A B ...), each in its own processes; the output of each is kept under the
 * temporary directory. Printed: each run's last line and CPU per call at its best held step (with the
 * MongoDB commands and Redis round trips per call that step counted, where its bench prints them), then per
 * side the median of the held rates, and the CPU per call of both at the highest rate both held.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { median } from './agent/stats';

const repo = path.resolve(__dirname, '..');
const say = (line: string) => process.stdout.write(`${line}\n`);

interface Options {
  baseline: string;
  runs: number;
  keep: boolean;
  benchArgs: string[];
}

function parse(argv: string[]): Options {
  const o: Options = { baseline: '47cb484', runs: 3, keep: false, benchArgs: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--baseline') o.baseline = argv[++i];
    else if (a === '--runs') o.runs = Number(argv[++i]);
    else if (a === '--keep') o.keep = true;
    else if (a === '--') {
      o.benchArgs = argv.slice(i + 1);
      break;
    } else throw new Error(`unknown option ${a}: npm run bench:ab -- [--baseline SHA] [--runs N] [--keep] [-- bench:agent options]`);
  }
  if (!(o.runs >= 1)) throw new Error('--runs needs a number >= 1');
  if (o.benchArgs.length === 0) o.benchArgs = ['--sweep'];
  return o;
}

/** One sweep's figures, read from bench:agent's output. */
interface SweepResult {
  side: string;
  lastLine: string;
  held: number;
  /** Offered rate -> CPU ms per call (all processes), for every step that ran. */
  cpuByRate: Map<number, number>;
  /** Offered rate -> held or not. */
  heldByRate: Map<number, boolean>;
  /** Offered rate -> what the step counted per call: "<mongo> MongoDB commands, <redis> Redis round trips" (n/a parts left out). */
  countsByRate: Map<number, string>;
}

function read(side: string, output: string): SweepResult {
  const lines = output.split('\n');
  const lastLine = [...lines].reverse().find((l) => l.startsWith('agent: ')) ?? '(no result line)';
  const held = Number(/^agent: (\d+(?:\.\d+)?) calls\/s/.exec(lastLine)?.[1] ?? 0);
  const cpuByRate = new Map<number, number>();
  const heldByRate = new Map<number, boolean>();
  const countsByRate = new Map<number, string>();
  let rate: number | undefined;
  for (const line of lines) {
    const step = /^(?:step|open loop) (\d+(?:\.\d+)?): offered .* -> (NOT )?held$/.exec(line);
    if (step) {
      rate = Number(step[1]);
      heldByRate.set(rate, !step[2]);
    }
    const cpu = /CPU ms per call: .* total (\d+(?:\.\d+)?)/.exec(line);
    if (cpu && rate !== undefined) cpuByRate.set(rate, Number(cpu[1]));
    // The baseline's bench may print neither count: then nothing is shown for it.
    const redis = /redis: (\d+(?:\.\d+)?) round trips/.exec(line);
    const mongo = /mongo: (\d+(?:\.\d+)?) commands per call/.exec(line);
    if ((redis || mongo) && rate !== undefined) {
      const parts = [...(mongo ? [`${mongo[1]} MongoDB commands`] : []), ...(redis ? [`${redis[1]} Redis round trips`] : [])];
      countsByRate.set(rate, parts.join(', '));
    }
  }
  return { side, lastLine, held, cpuByRate, heldByRate, countsByRate };
}

function run(cmd: string, args: string[], cwd: string, logFile?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, MONGO_URL: '', REDIS_URL: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (logFile) writeFileSync(logFile, out);
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} ${args.join(' ')} in ${cwd} exited ${code}:\n${out.slice(-3000)}`));
    });
  });
}

/** Whether `paths` are the same at `sha` as in this checkout's HEAD. */
function sameTree(git: (...args: string[]) => string, sha: string, ...paths: string[]): boolean {
  try {
    git('diff', '--quiet', sha, 'HEAD', '--', ...paths);
    return true;
  } catch {
    return false;
  }
}

async function main(): Promise<void> {
  const o = parse(process.argv.slice(2));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
  const baseSha = git('rev-parse', '--short', o.baseline);
  const headSha = git('rev-parse', '--short', 'HEAD');
  const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
  const work = path.join(os.tmpdir(), `rating-ab-${baseSha}`);
  const tree = path.join(work, 'tree');
  mkdirSync(work, { recursive: true });
  if (!existsSync(tree)) {
    git('worktree', 'add', '--detach', tree, baseSha);
    symlinkSync(path.join(repo, 'node_modules'), path.join(tree, 'node_modules'));
    // The built MongoDB-wire server is shared only when the baseline's sources of it are this checkout's:
    // the baseline's fresh checkout looks newer than the jar and rebuilds it, into the shared folder, from
    // its own sources (each side must run its own server; the baseline then builds its own, once).
    const jar = path.join(repo, 'tools', 'mongo-server', 'target');
    const sameServer = sameTree(git, baseSha, 'tools/mongo-server/src', 'tools/mongo-server/pom.xml');
    if (existsSync(jar) && sameServer) symlinkSync(jar, path.join(tree, 'tools', 'mongo-server', 'target'));
  }
  const cpus = os.cpus();
  say(`bench:ab: baseline ${baseSha} against this checkout ${headSha}${dirty ? ' (with uncommitted changes)' : ''}`);
  say(
    `  machine: ${cpus.length} CPUs (${cpus[0]?.model ?? 'unknown'}), node ${process.version}, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  say(
    `  each run: tsx bench/agent.ts ${o.benchArgs.join(' ')} (its own local servers and processes); ${o.runs} runs per side, alternating; logs in ${work}`,
  );
  say('building both sides (npm run build)');
  await run('npm', ['run', 'build'], tree);
  await run('npm', ['run', 'build'], repo);

  const results: SweepResult[] = [];
  try {
    for (let i = 1; i <= o.runs; i++) {
      for (const [side, cwd] of [
        [`baseline ${baseSha}`, tree],
        [`new ${headSha}`, repo],
      ] as const) {
        const started = Date.now();
        const out = await run('npx', ['tsx', 'bench/agent.ts', ...o.benchArgs], cwd, path.join(work, `${side.split(' ')[0]}-${i}.log`));
        const r = read(side, out);
        results.push(r);
        const best = r.cpuByRate.get(r.held);
        const counts = r.countsByRate.get(r.held);
        say(
          `run ${i} ${side.padEnd(18)} ${r.lastLine}${best !== undefined ? `; CPU ${best.toFixed(2)} ms per call at ${r.held}` : ''}${counts ? `; ${counts} per call` : ''} (${((Date.now() - started) / 1000).toFixed(0)} s)`,
        );
      }
    }
  } finally {
    if (!o.keep) {
      git('worktree', 'remove', '--force', tree);
      rmSync(work, { recursive: true, force: true });
    }
  }

  const sides = [...new Set(results.map((r) => r.side))];
  const [base, next] = sides.map((side) => results.filter((r) => r.side === side));
  const heldMedian = (rs: SweepResult[]) => median(rs.map((r) => r.held));
  say('summary:');
  for (const [side, rs] of [
    [sides[0], base],
    [sides[1], next],
  ] as const) {
    say(`  ${side}: held ${rs.map((r) => r.held).join(', ')} calls/s (median ${heldMedian(rs)})`);
  }
  // CPU per call compared at the same offered rate: the highest every run of both sides held.
  const rates = [...(base[0]?.heldByRate.keys() ?? [])].filter((rate) => [...base, ...next].every((r) => r.heldByRate.get(rate)));
  const common = rates.length ? Math.max(...rates) : undefined;
  if (common !== undefined) {
    const cpu = (rs: SweepResult[]) => median(rs.map((r) => r.cpuByRate.get(common) ?? Number.NaN));
    say(
      `  CPU per call at ${common} calls/s (the highest rate every run held): baseline ${cpu(base).toFixed(2)} ms, new ${cpu(next).toFixed(2)} ms (new/baseline ${(cpu(next) / cpu(base)).toFixed(2)})`,
    );
  } else say('  CPU per call: no rate held by every run of both sides');
  const ratio = heldMedian(next) / Math.max(1, heldMedian(base));
  say(
    `ab: new ${heldMedian(next)} calls/s against baseline ${heldMedian(base)} at p99 < 50 ms (x${ratio.toFixed(2)}), medians of ${o.runs} sweeps each`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${String((err as Error).stack ?? err)}\n`);
  process.exit(1);
});
