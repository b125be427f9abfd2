import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../../src/api/app';
import { recordCredit, recordRatedCall } from '../../../src/shared/domain/metrics';
import { QueueNames } from '../../../src/shared/domain/queues/names';
import { startWorkers, WorkerPool } from '../../../src/workers/worker-pool';
import { createTestContext, TestContext } from '../../support/harness';
import { account } from '../../support/seed';
import { startWorkerProcess, WorkerProcess } from '../../support/processes';
import { waitFor } from './receivers';

describe('Prometheus /metrics', () => {
  let ctx: TestContext;
  let api: FastifyInstance;
  let url: string;
  let pool: WorkerPool;

  beforeAll(async () => {
    ctx = await createTestContext();
    api = await buildApi(ctx);
    url = await api.listen({ host: '127.0.0.1', port: 0 });
    pool = await startWorkers(ctx, [QueueNames.maintenance]);
  });

  afterAll(async () => {
    await pool?.close();
    await api?.close();
    await ctx?.destroy();
  });

  const scrape = async () => {
    const response = await fetch(`${url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    return response.text();
  };

  it('reports request latency, queue depths, job durations, rated calls and debited amounts', async () => {
    await fetch(`${url}/health`);
    await ctx.queues.alerts.add('LOW_BALANCE', {
      kind: 'LOW_BALANCE',
      account_tag: 'a',
      transaction_tag: null,
      message: 'm',
      email: null,
      mobile: null,
      details: {},
      at: new Date().toISOString(),
    });
    const job = await ctx.queues.maintenance.add('scan-long-calls', { task: 'scan-long-calls' });
    await waitFor(async () => (await job.getState()) === 'completed', 'the maintenance job');
    recordRatedCall(ctx, 120n);
    recordRatedCall(ctx, 30n);
    recordCredit(ctx, 30n);

    const text = await scrape();
    expect(text).toMatch(/rating_http_request_duration_seconds_count\{server="api",route="\/health",method="GET",status="200"\} 1/);
    expect(text).toContain('rating_queue_jobs{queue="alerts",state="waiting"} 1');
    for (const state of ['waiting', 'active', 'failed', 'delayed'])
      expect(text).toContain(`rating_queue_jobs{queue="transactions",state="${state}"}`);
    // The schedule registered by startWorkers may have run a scan too: at least one, then.
    await waitFor(
      async () => /rating_job_duration_seconds_count\{queue="maintenance",outcome="completed"\} [1-9]/.test(await scrape()),
      'the job duration',
    );
    expect(text).toContain('rating_rated_calls_total 2');
    expect(text).toContain('rating_debited_amount_total 150');
    expect(text).toContain('rating_credited_amount_total 30');
    expect(text).toContain('rating_alert_deliveries_total');
    expect(text).toContain('process_cpu_user_seconds_total');
  });

  it('publishes the figures of the last ledger audit, which names a balance changed behind the ledger', async () => {
    await ctx.mongo.collections.accounts.insertOne(account('audited', { balance: 50n }));
    const audit = async () => {
      const job = await ctx.queues.maintenance.add('audit-ledger', { task: 'audit-ledger' });
      await waitFor(async () => (await job.getState()) === 'completed', 'the audit job');
    };
    await audit();
    let text = await scrape();
    expect(text).toContain('rating_ledger_audit{figure="differences"} 0');
    expect(text).toContain('rating_ledger_audit{figure="pending_markers"} 0');
    expect(text).toMatch(/rating_ledger_audit\{figure="age_seconds"\} \d+/);
    await ctx.mongo.collections.accounts.updateOne({ account_tag: 'audited' }, { $inc: { balance: 1n } });
    await audit();
    text = await scrape();
    expect(text).toContain('rating_ledger_audit{figure="differences"} 1');
  });

  it('keeps the metrics of two contexts in one process apart', async () => {
    const other = await createTestContext();
    try {
      recordRatedCall(other, 1n);
      const app = await buildApi(other);
      try {
        const otherUrl = await app.listen({ host: '127.0.0.1', port: 0 });
        const text = await (await fetch(`${otherUrl}/metrics`)).text();
        expect(text).toContain('rating_rated_calls_total 1');
      } finally {
        await app.close();
      }
    } finally {
      await other.destroy();
    }
  });
});

describe('a standalone worker process', () => {
  let ctx: TestContext;
  let worker: WorkerProcess;

  beforeAll(async () => {
    ctx = await createTestContext();
    worker = await startWorkerProcess(ctx.config);
  });

  afterAll(async () => {
    await worker?.stop();
    await ctx?.destroy();
  });

  it('serves /metrics on its health port', async () => {
    const url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(worker.output())?.[1];
    expect(url).toBeDefined();
    const text = await (await fetch(`${url}/metrics`)).text();
    expect(text).toContain('rating_queue_jobs{queue="processing",state="waiting"} 0');
    expect(text).toContain('# TYPE rating_job_duration_seconds histogram');
    expect(text).toContain('# TYPE rating_rated_calls_total counter');
  });
});
