import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';

export const CONSOLE_PATH = '/console';

/** dist/console at the project root, from dist/api (compiled) as from src/api (ts-jest, tsx). */
export const DEFAULT_CONSOLE_ROOT = path.resolve(__dirname, '..', '..', 'dist', 'console');

export interface ConsolePluginOptions {
  /** The Vite build's output; default dist/console. */
  root?: string;
}

const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

/** The path below /console/ when it names a file inside root; null for anything trying to leave it. */
function relativeFile(wildcard: string): string | null {
  if (wildcard.includes('\0') || wildcard.includes('\\')) return null;
  const normalized = path.posix.normalize(`/${wildcard}`).slice(1);
  if (normalized.split('/').some((segment) => segment === '..' || segment.startsWith('.'))) return null;
  return normalized;
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
}

/**
 * The operator console (src/console, built by `npm run build` into dist/console) at /console/.
 * Hashed assets (assets/*) are cached for good; index.html is revalidated and answers every other
 * path under /console/, so the console's client-side routes survive a reload. Open to all
 * (src/shared/infra/auth/access.ts): the files carry no data, which the console fetches from /graphql
 * with the operator's token. Without a build, /console answers 503 saying how to make one.
 */
const consolePlugin: FastifyPluginAsync<ConsolePluginOptions> = async (app, options) => {
  const root = options.root ?? DEFAULT_CONSOLE_ROOT;
  const built = () => existsSync(path.join(root, 'index.html'));

  if (existsSync(root)) {
    // preCompressed: tools/build-console.mjs writes .br and .gz copies of the assets.
    await app.register(fastifyStatic, {
      root,
      serve: false,
      cacheControl: false,
      dotfiles: 'ignore',
      decorateReply: true,
      preCompressed: true,
    });
  }

  const unavailable = (reply: FastifyReply) =>
    reply
      .code(503)
      .header('cache-control', 'no-store')
      .type('text/plain; charset=utf-8')
      .send('The operator console is not built: run `npm run build` (it builds dist/console), then restart the API.\n');

  app.get(CONSOLE_PATH, async (request, reply) => {
    if (!built()) return unavailable(reply);
    const query = request.url.indexOf('?');
    return reply.redirect(`${CONSOLE_PATH}/${query >= 0 ? request.url.slice(query) : ''}`, 302);
  });

  app.get<{ Params: { '*': string } }>(`${CONSOLE_PATH}/*`, async (request, reply) => {
    if (!built() || typeof reply.sendFile !== 'function') return unavailable(reply);
    const file = relativeFile(request.params['*'] ?? '');
    if (file !== null && file !== '' && (await isFile(path.join(root, file)))) {
      reply.header('cache-control', file.startsWith('assets/') ? IMMUTABLE : REVALIDATE);
      return reply.sendFile(file);
    }
    // A missing hashed asset is a 404, not the page: a stale tab must not parse HTML as script.
    if (file === null || file.startsWith('assets/')) {
      return reply.code(404).header('cache-control', 'no-store').type('text/plain; charset=utf-8').send('Not found\n');
    }
    reply.header('cache-control', REVALIDATE);
    return reply.type('text/html; charset=utf-8').sendFile('index.html');
  });
};

export default consolePlugin;
