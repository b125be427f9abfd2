import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../../src/api/app';
import { testPort } from '../../support/ports';
import { createTestContext, graphql, TestContext, uniqueName } from '../../support/harness';
import { waitFor } from './receivers';

const root = path.resolve(__dirname, '..', '..', '..');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface Started {
  output(): string;
  exited: Promise<Run>;
  stop(): Promise<Run>;
}

/** Starts a built entry point (dist/...) with `env`. */
function start(script: string, args: string[], env: NodeJS.ProcessEnv): Started {
  const child = spawn(process.execPath, [path.join(root, 'dist', script), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<Run>((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
  return {
    output: () => stdout + stderr,
    exited,
    stop: () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

const run = (script: string, args: string[], env: NodeJS.ProcessEnv) => start(script, args, env).exited;

function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info', QUEUE_PREFIX: uniqueName('q') };
  delete env.RATING_TOKENS;
  return { ...env, ...extra };
}

describe('production start check', () => {
  it.each(['api', 'agent'])('the %s refuses to start in production without tokens', async (role) => {
    const result = await run(
      `${role}/main.js`,
      [],
      baseEnv({ NODE_ENV: 'production', MONGO_DB: uniqueName('prod'), API_PORT: '0', AGENT_PORT: '0' }),
    );
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain('NODE_ENV=production and no API tokens are configured');
  });

  it('starts in production with a token, and requires it', async () => {
    const port = await testPort();
    const secret = 'production-secret-0123456789';
    const api = start(
      'api/main.js',
      [],
      baseEnv({ NODE_ENV: 'production', MONGO_DB: uniqueName('prod'), API_PORT: String(port), RATING_TOKENS: `ops:read:${secret}` }),
    );
    try {
      await waitFor(() => api.output().includes('api ready') || api.output().includes('start failed'), 'the API to start');
      expect(api.output()).toContain('api ready');
      const url = `http://127.0.0.1:${port}`;
      expect((await graphql(url, '{ version }')).status).toBe(401);
      expect((await graphql(url, '{ version }', undefined, { authorization: `Bearer ${secret}` })).status).toBe(200);
    } finally {
      expect((await api.stop()).code).toBe(0); // SIGTERM: a clean shutdown
    }
  });
});

describe('token CLI', () => {
  let ctx: TestContext;
  let api: FastifyInstance;
  let url: string;
  const cli = (...args: string[]) => run('cli/token.js', args, baseEnv({ MONGO_DB: ctx.config.mongoDb }));

  beforeAll(async () => {
    ctx = await createTestContext({ AUTH_CACHE_MS: '100' });
    api = await buildApi(ctx);
    url = await api.listen({ host: '127.0.0.1', port: 0 });
  });

  afterAll(async () => {
    await api?.close();
    await ctx?.destroy();
  });

  it('creates a token that works, lists it, and revokes it so that it stops working', async () => {
    const created = await cli('create', '--name', 'ci-reader', '--scopes', 'read');
    expect(created.code).toBe(0);
    const secret = created.stdout.trim();
    expect(secret).toMatch(/^rt_[A-Za-z0-9_-]{43}$/);
    expect(created.stderr).toContain('created token "ci-reader"');

    const stored = await ctx.mongo.db.collection('tokens').findOne({ name: 'ci-reader' });
    expect(stored).toMatchObject({ scopes: ['read'], revoked_at: null });
    expect(JSON.stringify(stored)).not.toContain(secret); // only the hash is kept

    const withToken = () => graphql(url, '{ version }', undefined, { authorization: `Bearer ${secret}` });
    expect((await withToken()).status).toBe(200);
    // With a token in the database the open development mode ends (within AUTH_CACHE_MS).
    await waitFor(async () => (await graphql(url, '{ version }')).status === 401, 'anonymous requests to be refused');
    expect((await graphql(url, 'mutation { __typename }', undefined, { authorization: `Bearer ${secret}` })).status).toBe(403);

    const listed = await cli('list');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/ci-reader\s+read\s+\S+\s+active/);
    expect(listed.stdout).not.toContain(secret);

    const duplicate = await cli('create', '--name', 'ci-reader', '--scopes', 'read');
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toContain('already exists');

    const revoked = await cli('revoke', 'ci-reader');
    expect(revoked.code).toBe(0);
    await waitFor(async () => (await withToken()).status === 401, 'the revoked token to be refused');
    expect((await withToken()).body.errors?.[0]).toMatchObject({
      message: 'Invalid or revoked token',
      extensions: { code: 'UNAUTHENTICATED' },
    });
    expect((await cli('list')).stdout).toMatch(/ci-reader\s+read\s+\S+\s+revoked/);
    expect((await cli('revoke', 'ci-reader')).code).toBe(1); // nothing active left
  });

  it('refuses bad input, and says how to start the service when no MONGO_URL is set and none runs', async () => {
    const badScope = await cli('create', '--name', 'x', '--scopes', 'read,admin');
    expect(badScope.code).toBe(2);
    expect(badScope.stderr).toContain('unknown scope "admin"');

    // No MONGO_URL and no `npm start` running with this (empty) DATA_DIR: the one-line hint (src/cli/servers.ts).
    const env = baseEnv({ DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'rating-token-')) });
    delete env.MONGO_URL;
    const noMongo = await run('cli/token.js', ['list'], env);
    expect(noMongo.code).toBe(2);
    expect(noMongo.stderr).toBe(
      `no service is running with DATA_DIR=${env.DATA_DIR}: start the service with \`npm start\` in another terminal from this folder (same DATA_DIR), or set MONGO_URL as the service uses them\n`,
    );
    rmSync(env.DATA_DIR!, { recursive: true, force: true });
  });
});
