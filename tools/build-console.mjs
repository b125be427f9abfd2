#!/usr/bin/env node
// Builds the operator console (src/console, Vite) into dist/console, unless nothing it depends on
// changed since the last build: the hash of src/console/**, its Vite config and package-lock.json
// is kept in dist/console/.build-hash. `--force` builds anyway. Prints one line: built or up to date.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const sourceDir = join(root, 'src', 'console');
const outDir = join(root, 'dist', 'console');
const hashFile = join(outDir, '.build-hash');
const configFile = join(sourceDir, 'vite.config.mjs');

function filesUnder(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

function inputsHash() {
  const hash = createHash('sha256');
  const files = [...filesUnder(sourceDir), join(root, 'package-lock.json'), join(root, 'tools', 'build-console.mjs')]
    .filter((f) => existsSync(f))
    .sort();
  for (const file of files) {
    hash.update(relative(root, file).split('\\').join('/'));
    hash.update('\0');
    hash.update(readFileSync(file));
    hash.update('\0');
  }
  return hash.digest('hex');
}

const force = process.argv.includes('--force');
const wanted = inputsHash();
const current = existsSync(hashFile) ? readFileSync(hashFile, 'utf8').trim() : '';
if (!force && current === wanted && existsSync(join(outDir, 'index.html'))) {
  console.log(`console: up to date (dist/console, ${wanted.slice(0, 12)})`);
  process.exit(0);
}

// Built beside dist/console, then swapped in: a running API (or a second build started at the same
// time, e.g. by parallel test runs) never sees a half-written directory.
const started = Date.now();
const staging = join(root, 'dist', `.console-build-${process.pid}`);
const { build } = await import('vite');
try {
  await build({ configFile, logLevel: 'warn', build: { outDir: staging, emptyOutDir: true } });
} catch (error) {
  rmSync(staging, { recursive: true, force: true });
  throw error;
}

// Pre-compressed copies: the API serves them (@fastify/static preCompressed) to browsers that accept them.
let raw = 0;
let compressed = 0;
for (const file of filesUnder(join(staging, 'assets'))) {
  if (!/\.(js|css|svg|json)$/.test(file)) continue;
  const content = readFileSync(file);
  const br = brotliCompressSync(content, { params: { [zlib.BROTLI_PARAM_QUALITY]: 9, [zlib.BROTLI_PARAM_SIZE_HINT]: content.length } });
  writeFileSync(`${file}.br`, br);
  writeFileSync(`${file}.gz`, gzipSync(content, { level: 9 }));
  raw += content.length;
  compressed += br.length;
}
writeFileSync(join(staging, '.build-hash'), `${wanted}\n`);
const previous = join(root, 'dist', `.console-old-${process.pid}`);
if (existsSync(outDir)) renameSync(outDir, previous);
renameSync(staging, outDir);
rmSync(previous, { recursive: true, force: true });
const kb = (n) => `${Math.round(n / 1024)} KB`;
console.log(
  `console: built dist/console in ${((Date.now() - started) / 1000).toFixed(1)} s, assets ${kb(raw)} (${kb(compressed)} brotli) (${wanted.slice(0, 12)})`,
);
