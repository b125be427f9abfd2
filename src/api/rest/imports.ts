import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { QueueEvents } from 'bullmq';
import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../shared/domain/context';
import { badInput, ErrorCodes } from '../../shared/infra/errors';
import { claimUpload, ContentId, HeaderError, readRecords, UploadRun, type Format } from '../../shared/domain/imports';
import { QueueNames } from '../../shared/domain/queues/names';
import { bullmqPrefix, createQueueEvents } from '../../shared/domain/queues/queues';
import { text } from '../../shared/domain/validation/text';
import { oneQueryValue, refusedWithoutWrite, refuseUnknownParameters, registerUploadScope, uploadBody } from './uploads';

/** Largest CDR file accepted over HTTP. */
export const IMPORT_BODY_LIMIT = 1024 * 1024 * 1024;

/** Content types of an upload and the format each implies when `format=` is not given. */
const CONTENT_TYPES: Readonly<Record<string, Format>> = { 'text/csv': 'csv', 'application/x-ndjson': 'jsonl' };

export interface ImportsOptions {
  /** The API's context (its MongoDB pool, Redis, configuration, logger). */
  ctx: AppContext;
  /** Where bodies are spooled before their import runs (default os.tmpdir()). */
  spoolDir?: string;
}

export interface ImportAnswer {
  import_id: string;
}

function readQuery(query: Record<string, unknown>, contentType: string | undefined): { format: Format; name: string | null } {
  refuseUnknownParameters(query, ['format', 'name']);
  const format = oneQueryValue(query, 'format');
  if (format !== undefined && format !== 'csv' && format !== 'jsonl') throw badInput('format', 'must be csv or jsonl');
  const name = oneQueryValue(query, 'name');
  const mediaType = (contentType ?? '').split(';')[0].trim().toLowerCase();
  return {
    format: format ?? CONTENT_TYPES[mediaType] ?? 'csv',
    name: name === undefined || name === '' ? null : text(255)('name', name),
  };
}

/** The body, streamed to a file of its own while hashed: the import id needs the whole content. */
async function spool(body: Readable, dir: string, format: Format): Promise<{ dir: string; file: string; importId: string; bytes: number }> {
  const spoolDir = await mkdtemp(path.join(dir, 'rating-import-'));
  const file = path.join(spoolDir, 'body');
  const hash = new ContentId(format);
  let bytes = 0;
  const hashing = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    await pipeline(body, hashing, createWriteStream(file));
  } catch (err) {
    await rm(spoolDir, { recursive: true, force: true });
    throw err;
  }
  return { dir: spoolDir, file, importId: hash.id(), bytes };
}

/** A CSV's header is checked before the import is registered: a file that cannot be imported is a 400, not a failed import. */
async function checkHeader(file: string): Promise<void> {
  const input = createReadStream(file);
  const records = readRecords(input, 'csv');
  try {
    await records.next();
  } finally {
    await records.return(undefined).catch(() => undefined);
    input.destroy();
  }
}

/**
 * `POST /v1/imports?format=csv|jsonl&name=FILE` with a `text/csv` or `application/x-ndjson` body (up to
 * 1 GiB, streamed): imports a file of call detail records as `rating import FILE` does (docs/IMPORTS.md).
 *
 * The body is spooled to a temporary file while its hash is computed: the hash is the import id (the
 * CLI's: same content and format, same import), so uploading a file again is the same import, its
 * finished batches replayed and nothing charged twice. Once the import is registered in MongoDB the
 * answer is 202 `{ import_id }` and the import runs in the background in this process (workers rate
 * the batches); its progress and rejects are in MongoDB (GraphQL `Import(id)`, `allImports`). If the
 * process dies mid-import, uploading the same file again resumes it (src/shared/domain/imports/uploads.ts).
 * Bad parameters, an empty body or a bad CSV header answer 400 with nothing stored. Needs the `write`
 * scope. Not wrapped in fastify-plugin: its parsers and error handler stay in its own scope.
 */
export const importsRoutes: FastifyPluginAsync<ImportsOptions> = async (app, { ctx, spoolDir }) => {
  const runs = new Set<UploadRun>();
  let events: Promise<QueueEvents> | undefined;

  const queueEvents = (): Promise<QueueEvents> => {
    if (!events) {
      const created = createQueueEvents(ctx.newRedis(), bullmqPrefix(ctx.config), QueueNames.imports);
      // The connection is closed with the plugin; that ends the event loop with an error we expect.
      created.on('error', (err) => ctx.logger.debug({ err }, 'imports queue events'));
      events = created.waitUntilReady().then(() => created);
      events.catch(() => {
        events = undefined;
        void created.close().catch(() => undefined);
      });
    }
    return events;
  };

  app.addHook('onClose', async () => {
    await Promise.all(
      [...runs].map((run) => run.stop('interrupted: the API process stopped; upload the same file again to resume the import')),
    );
    if (events) await (await events.catch(() => null))?.close().catch(() => undefined);
  });

  registerUploadScope(app, {
    contentTypes: Object.keys(CONTENT_TYPES),
    bodyLimit: IMPORT_BODY_LIMIT,
    badInput: (err) => (err instanceof HeaderError ? { code: ErrorCodes.BAD_USER_INPUT, message: err.message } : null),
    failure: {
      log: 'import upload failed',
      answer: 'internal error: nothing is charged twice; uploading the file again registers or resumes the import',
      unavailable:
        'a store is unreachable: the import may not be registered or may have stopped; upload the file again once the service is ready (GET /ready) to register or resume it; nothing is charged twice',
    },
  });

  app.post('/v1/imports', { bodyLimit: IMPORT_BODY_LIMIT }, async (request, reply) => {
    if (refusedWithoutWrite(request, reply)) return reply;
    const params = readQuery(request.query as Record<string, unknown>, request.headers['content-type']);
    const body = uploadBody(request, reply, IMPORT_BODY_LIMIT, 'file', 'text/csv or application/x-ndjson');
    if (!body) return reply;
    const spooled = await spool(body, spoolDir ?? os.tmpdir(), params.format);
    const discard = () => rm(spooled.dir, { recursive: true, force: true }).catch(() => undefined);
    let run: UploadRun;
    try {
      if (spooled.bytes === 0) throw badInput('body', 'is empty: send the file as the request body');
      if (params.format === 'csv') await checkHeader(spooled.file);
      const queueEventsReady = await queueEvents(); // before the claim: a claim without a run would hold the import until it goes stale
      const claim = await claimUpload(ctx.mongo.db, { importId: spooled.importId, name: params.name, format: params.format });
      if (!claim.owned) {
        // Another upload of the same file is running it (here or in another API process): same import.
        await discard();
        return reply.code(202).send({ import_id: spooled.importId } satisfies ImportAnswer);
      }
      run = new UploadRun({
        db: ctx.mongo.db,
        queue: ctx.queues.imports,
        events: queueEventsReady,
        importId: spooled.importId,
        format: params.format,
        file: spooled.file,
        claim,
      });
    } catch (err) {
      await discard();
      throw err;
    }
    runs.add(run);
    void run.finished.finally(() => {
      runs.delete(run);
      return discard();
    });
    request.log.info({ import_id: spooled.importId, name: params.name, bytes: spooled.bytes }, 'import upload registered');
    return reply.code(202).send({ import_id: spooled.importId } satisfies ImportAnswer);
  });
};

export default importsRoutes;
