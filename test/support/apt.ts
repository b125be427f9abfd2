import { spawnSync } from 'node:child_process';

/**
 * Debian packages for the labs (SIP, console): what a fresh CI machine lacks is installed with apt-get,
 * exactly as a newcomer running the lab as root would get it.
 */

function installed(pkg: string): boolean {
  const r = spawnSync('dpkg', ['-s', pkg], { encoding: 'utf8' });
  return r.status === 0 && /^Status: install ok installed$/m.test(r.stdout);
}

export function commandExists(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

/**
 * apt-get installs the packages that are missing (apt-get update only when something is), then checks
 * that `commands` are on PATH. Throws an Error saying what to install when not root.
 */
export function ensurePackages(packages: readonly string[], commands: readonly string[], log: (line: string) => void): void {
  const missing = packages.filter((p) => !installed(p));
  if (missing.length === 0 && commands.every(commandExists)) return;
  const wanted = missing.length ? missing : [...packages];
  if (process.getuid?.() !== 0) {
    throw new Error(
      `missing Debian packages: ${wanted.join(' ')}; install them (sudo apt-get install -y ${wanted.join(' ')}) or run as root`,
    );
  }
  log(`installing ${wanted.join(' ')} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = spawnSync('apt-get', ['update'], { stdio: ['ignore', 'inherit', 'inherit'], env, timeout: 300_000 });
  if (update.status !== 0) throw new Error('apt-get update failed');
  const install = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', ...wanted], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env,
    timeout: 600_000,
  });
  if (install.status !== 0) throw new Error(`apt-get install ${wanted.join(' ')} failed`);
  const absent = commands.filter((c) => !commandExists(c));
  if (absent.length > 0) throw new Error(`${absent.join(', ')} still missing after apt-get install`);
}

/** The first group of `pattern` in a command's output, or '?'. */
export function versionOf(command: string, args: string[], pattern: RegExp): string {
  const r = spawnSync(command, args, { encoding: 'utf8' });
  return pattern.exec(`${r.stdout}${r.stderr}`)?.[1] ?? '?';
}
