import { mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../../src/api/app';
import { ContentId, importRejectsOf, REJECTS_KEPT, STALE_MS, uploadsOf } from '../../../src/shared/domain/imports';
import { waitFor } from '../../support/agent-harness';
import { createTestContext, graphql, type TestContext } from '../../support/harness';
import { startWorkerProcess, type WorkerProcess } from '../../support/processes';
import { balances, Call, csvOf, seedImportData } from './support';

/**
 * POST /v1/imports on the management API (the plugin registered as the lead will) with a real worker
 * process rating the batches: progress, counts and rejects through GraphQL, balances charged once, the
 * same file uploaded again is the same import and charges nothing, bad requests store nothing.
 */
describe('CDR upload: POST /v1/imports', () => {
  let ctx: TestContext;
  let worker: WorkerProcess;
  let app: FastifyInstance;
  let url: string;
  let spoolDir: string;

  const upload = async (query: string, body: string, contentType = 'text/csv') => {
    const response = await fetch(`${url}/v1/imports?${query}`, { method: 'POST', headers: { 'content-type': contentType }, body });
    return { status: response.status, body: (await response.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  const ok = async (query: string, variables?: Record<string, unknown>) => {
    const answer = await graphql(url, query, variables);
    if (answer.body.errors) throw new Error(JSON.stringify(answer.body.errors));
    return answer.body.data as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  const IMPORT_FIELDS =
    'id name state lines done accepted recorded rejected created_at started_at finished_at error rejects { line reason account_tag }';
  const finished = (id: string, after = 0) =>
    waitFor(
      async () => {
        const { Import } = await ok(`query($id: ID!) { Import(id: $id) { ${IMPORT_FIELDS} } }`, { id });
        return Import && Import.state !== 'running' && Date.parse(Import.finished_at) >= after ? Import : null;
      },
      `import ${id} to finish`,
      60_000,
    );

  beforeAll(async () => {
    ctx = await createTestContext({ JOB_LOCK_MS: '2000' });
    await seedImportData(ctx, 3);
    worker = await startWorkerProcess(ctx.config);
    // Uploads spool under os.tmpdir(): a directory of this file's own, so "nothing left behind" is checkable.
    spoolDir = mkdtempSync(path.join(os.tmpdir(), 'rating-upload-test-'));
    process.env.TMPDIR = spoolDir;
    app = await buildApi(ctx);
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });

  afterAll(async () => {
    await app?.close();
    await worker?.stop();
    await ctx?.destroy();
  });

  const good: Call[] = Array.from({ length: 12 }, (_, i) => ({ tag: `u${i}`, account: `a${i % 3}`, seconds: i + 1 }));
  const charged = (acct: string) => good.filter((c) => c.account === acct).reduce((s, c) => s + BigInt(c.seconds), 0n);
  const csv = csvOf(good, [
    'bad1,a0,4930111,4930222,not-a-date,2026-01-01T12:00:10Z', // line 14: invalid timestamp
    'x1,nobody,4930111,4930222,2026-01-01T12:00:00Z,2026-01-01T12:00:10Z', // line 15: unknown account (refused by the worker)
    'x2,a0,4930111,3399,2026-01-01T12:00:00Z,2026-01-01T12:00:10Z', // line 16: no rate (refused)
  ]);
  let importId: string;

  it('answers 202 with the import id, then imports in the background', async () => {
    const answer = await upload('format=csv&name=cdrs-2026-01.csv', csv);
    expect(answer.status).toBe(202);
    importId = answer.body.import_id;
    // The CLI's id for the same content and format.
    expect(importId).toBe(new ContentId('csv').update(Buffer.from(csv)).id());

    const done = await finished(importId);
    expect(done).toMatchObject({
      id: importId,
      name: 'cdrs-2026-01.csv',
      state: 'done',
      lines: 15,
      done: 15,
      accepted: 14,
      recorded: 12,
      rejected: 3,
      error: null,
    });
    expect(done.created_at).toEqual(expect.any(String));
    expect(done.rejects).toEqual([
      { line: 14, reason: expect.stringMatching(/^BAD_USER_INPUT: timestamp_begin: must be a datetime/), account_tag: null },
      { line: 15, reason: 'NOT_FOUND', account_tag: 'nobody' },
      { line: 16, reason: 'UNREACHABLE_DESTINATION', account_tag: 'a0' },
    ]);
    const after = await balances(ctx);
    for (let i = 0; i < 3; i++) expect(after.get(`a${i}`)).toBe(1_000_000n - charged(`a${i}`));
    expect(await ctx.mongo.collections.transactions.countDocuments({ transaction_tag: /^u/ })).toBe(12);
    // The spooled body is removed once the import ends.
    await waitFor(async () => readdirSync(spoolDir).length === 0, 'the spool to be emptied');
  });

  it('lists, filters and counts imports', async () => {
    const data = await ok(`{
      all: allImports(sortField: "created_at", sortOrder: "DESC") { id state }
      found: allImports(filter: { q: "CDRS-2026" }) { id name rejects(limit: 1) { line } }
      none: allImports(filter: { state: "running" }) { id }
      meta: _allImportsMeta(filter: { ids: ["${importId}", "nope"] }) { count }
      missing: Import(id: "nope") { id }
    }`);
    expect(data).toEqual({
      all: [{ id: importId, state: 'done' }],
      found: [{ id: importId, name: 'cdrs-2026-01.csv', rejects: [{ line: 14 }] }],
      none: [],
      meta: { count: 1 },
      missing: null,
    });
    const bad = await graphql(url, `{ Import(id: "${importId}") { rejects(limit: 0) { line } } }`);
    expect(bad.body.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'limit' });
  });

  it('the same file uploaded again is the same import and charges nothing', async () => {
    const before = await balances(ctx);
    const started = Date.now();
    const again = await upload('format=csv&name=again.csv', csv);
    expect(again).toEqual({ status: 202, body: { import_id: importId } });
    const done = await finished(importId, started);
    expect(done).toMatchObject({ name: 'again.csv', state: 'done', lines: 15, done: 15, accepted: 14, recorded: 12, rejected: 3 });
    expect(done.rejects).toHaveLength(3);
    expect(await balances(ctx)).toEqual(before);
    expect(await ctx.mongo.collections.transactions.countDocuments({ transaction_tag: /^u/ })).toBe(12);
    expect(await importRejectsOf(ctx.mongo.db).countDocuments({ import_id: importId })).toBe(3);
    expect(await uploadsOf(ctx.mongo.db).countDocuments()).toBe(1);
  });

  it('an import running in a live process is not run twice; one whose process died is taken over and resumed', async () => {
    const imports = uploadsOf(ctx.mongo.db);
    const before = await balances(ctx);
    // Another API process runs it (its heartbeat is fresh): the upload answers the same import and starts nothing.
    await imports.updateOne({ _id: importId }, { $set: { state: 'running', runner: 'other-process', heartbeat_at: new Date() } });
    expect(await upload('format=csv', csv)).toEqual({ status: 202, body: { import_id: importId } });
    expect(await imports.findOne({ _id: importId })).toMatchObject({ state: 'running', runner: 'other-process' });
    await waitFor(async () => readdirSync(spoolDir).length === 0, 'the spool to be emptied');

    // That process died mid-import (no heartbeat for longer than STALE_MS): the next upload resumes it.
    await imports.updateOne({ _id: importId }, { $set: { heartbeat_at: new Date(Date.now() - STALE_MS - 1000) } });
    const started = Date.now();
    expect(await upload('format=csv&name=resumed.csv', csv)).toEqual({ status: 202, body: { import_id: importId } });
    expect(await finished(importId, started)).toMatchObject({
      name: 'resumed.csv',
      state: 'done',
      lines: 15,
      accepted: 14,
      recorded: 12,
      rejected: 3,
    });
    expect((await imports.findOne({ _id: importId }))?.runner).not.toBe('other-process');
    expect(await balances(ctx)).toEqual(before);
  });

  it(`keeps the first ${REJECTS_KEPT} rejected lines and counts them all`, async () => {
    const bad = Array.from(
      { length: REJECTS_KEPT + 5 },
      (_, i) => `,a0,4930111,4930222,2026-01-01T12:00:00Z,2026-01-01T12:00:${String(i % 60).padStart(2, '0')}Z`,
    );
    const answer = await upload('format=csv&name=bad.csv', csvOf([], bad));
    expect(answer.status).toBe(202);
    const { import_id: id } = answer.body;
    const done = await finished(id);
    expect(done).toMatchObject({ state: 'done', lines: REJECTS_KEPT + 5, accepted: 0, rejected: REJECTS_KEPT + 5 });
    expect(await importRejectsOf(ctx.mongo.db).countDocuments({ import_id: id })).toBe(REJECTS_KEPT);
    const { Import } = await ok(`{ Import(id: "${id}") { rejects(limit: 10000) { line } } }`);
    expect(Import.rejects).toHaveLength(REJECTS_KEPT);
    expect(Import.rejects[0]).toEqual({ line: 2 });
    expect(Import.rejects[REJECTS_KEPT - 1]).toEqual({ line: REJECTS_KEPT + 1 });
  });

  it('JSON lines: the format comes from the content type', async () => {
    const line = JSON.stringify({
      transaction_tag: 'j1',
      account_tag: 'a1',
      source: 4930111,
      destination: '4930222',
      timestamp_begin: '2026-01-01T12:00:00Z',
      timestamp_end: '2026-01-01T12:00:07Z',
    });
    const before = await balances(ctx);
    const answer = await upload('name=calls.jsonl', `${line}\n{"oops": 1}\n`, 'application/x-ndjson');
    expect(answer.status).toBe(202);
    const done = await finished(answer.body.import_id);
    expect(done).toMatchObject({
      state: 'done',
      lines: 2,
      accepted: 1,
      rejected: 1,
      rejects: [{ line: 2, reason: 'BAD_USER_INPUT: oops: unknown field', account_tag: null }],
    });
    expect((await balances(ctx)).get('a1')).toBe(before.get('a1')! - 7n);
  });

  it('malformed requests answer 400 and store nothing', async () => {
    const imports = await uploadsOf(ctx.mongo.db).countDocuments();
    const rejects = await importRejectsOf(ctx.mongo.db).countDocuments();
    const records = await ctx.mongo.collections.transactions.countDocuments();
    const other = csvOf([{ tag: 'z1', account: 'a0', seconds: 3 }]);
    const cases: Array<[string, string, string, string]> = [
      ['format=xml', other, 'text/csv', 'format'],
      ['format=csv&format=jsonl', other, 'text/csv', 'format'],
      ['name=a.csv&name=b.csv', other, 'text/csv', 'name'],
      ['format=csv&batch=7', other, 'text/csv', 'batch'],
      [`name=${encodeURIComponent('bad\nname')}`, other, 'text/csv', 'name'],
      ['format=csv', '', 'text/csv', 'body'],
    ];
    for (const [query, body, contentType, field] of cases) {
      const answer = await upload(query, body, contentType);
      expect({
        query,
        status: answer.status,
        code: answer.body.errors?.[0]?.extensions?.code,
        field: answer.body.errors?.[0]?.extensions?.field,
      }).toEqual({
        query,
        status: 400,
        code: 'BAD_USER_INPUT',
        field,
      });
    }
    const header = await upload('format=csv', 'transaction_tag,acount_tag\nx,y\n');
    expect(header.status).toBe(400);
    expect(header.body.errors[0].message).toMatch(/unknown column "acount_tag"/);
    for (const contentType of ['application/json', 'text/plain']) {
      const wrong = await upload('format=csv', contentType === 'text/plain' ? other : '{"a":1}', contentType);
      expect({ contentType, status: wrong.status, code: wrong.body.errors?.[0]?.extensions?.code }).toEqual({
        contentType,
        status: 415,
        code: 'BAD_USER_INPUT',
      });
    }

    expect(await uploadsOf(ctx.mongo.db).countDocuments()).toBe(imports);
    expect(await importRejectsOf(ctx.mongo.db).countDocuments()).toBe(rejects);
    expect(await ctx.mongo.collections.transactions.countDocuments()).toBe(records);
    expect(readdirSync(spoolDir)).toEqual([]);
  });
});
