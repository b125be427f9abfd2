import type { AccountDoc } from '../../../src/shared/domain/types';
import { auditLedger } from '../../../src/shared/domain/ledger/audit';
import type { TransactionJob } from '../../../src/shared/domain/calls';
import type { Redis } from 'ioredis';
import { callQueueKey, readDelivery, type CallJob } from '../../../src/shared/infra/call-queue';
import { createTestContext, TestContext } from '../../support/harness';
import { openMonitor } from '../../support/redis-monitor';
import { AgentProcess, startAgentProcess, stopAll } from '../../support/multi-agent';
import { startWorkerProcess, WorkerProcess } from '../../support/processes';
import { account, carrier, pricelist, rate, seed } from '../../support/seed';

/**
 * Issue 13: two agent processes and three worker processes on one Redis and one MongoDB, as
 * `docker compose up --scale` runs them. 200 calls go round-robin over both agents, 16 at a time
 * (most calls begin on one agent and end on the other); one worker process is killed with SIGKILL
 * partway through and a replacement is started later. Then:
 * - every answer is the one for its request (ok/reason as the plan says, tags as sent, authorization
 *   balances of the probed account), and came back through the asking agent's own inbox: each job is
 *   addressed to the agent that enqueued it, its reply was published there, and no answer took the
 *   agent's fallback path (reading the job after AGENT_TIMEOUT_MS);
 * - once the workers are done, every balance is exact (opening balance minus the fees of its
 *   acknowledged calls, parents likewise on their own pricelist), there is one charged record per
 *   acknowledged call and party, rolled-back calls leave nothing, and the ledger audit finds nothing.
 */

jest.setTimeout(150_000);

const AGENT_TIMEOUT_MS = 15_000;
const SCENARIOS = 200;
const PARALLEL = 16;
const KILL_AFTER = 60; // scenarios finished when one worker process is killed
const REPLACE_AFTER = 120; // ... and when its replacement is started
/**
 * Work a killed worker leaves half done in MongoDB (a ledger marker whose job was redelivered but found
 * the record already charged) is finished by the recovery sweep, one schedule for all workers every
 * LONG_CALL_SCAN_SECONDS (60 s by default), for markers older than 2 x JOB_LOCK_MS + 5 s. A short period
 * keeps the test's wait bounded; what the sweep had to finish is printed (see the report below).
 */
const WORKER_ENV = { LONG_CALL_SCAN_SECONDS: '3' };

// A call of n seconds costs the caller 1 + n (60/min, 1 s steps, connect fee 1) and its parent 2n
// (its own pricelist: 120/min, 1 s steps, no connect fee).
const callerFee = (n: number) => BigInt(1 + n);
const parentFee = (n: number) => BigInt(2 * n);

const CALLERS = Array.from({ length: 10 }, (_, i) => `a${i}`);
const PARENT: Record<string, string | undefined> = { a0: 'p1', a1: 'p1', a2: 'p1', a3: 'p1', a4: 'p2', a5: 'p2', a6: 'p2' };
const OPENING: Record<string, bigint> = {
  ...Object.fromEntries(CALLERS.map((tag, i) => [tag, 100_000n + BigInt(i) * 1_000n])),
  p1: 1_000_000n,
  p2: 700_000n,
  // Authorization probes: never charged, so their answers' balances are known exactly.
  probe0: 5_000n,
  probe1: 6_234n,
  probe2: 7_468n,
  probe3: 8_702n,
};

type Route = 'begin_transaction' | 'end_transaction' | 'record_transaction' | 'rollback_transaction' | 'authorization';
const OP: Record<Route, TransactionJob['op']> = {
  begin_transaction: 'begin',
  end_transaction: 'end',
  record_transaction: 'record',
  rollback_transaction: 'rollback',
  authorization: 'authorization',
};

interface Step {
  agent: number;
  route: Route;
  body: Record<string, string>;
  answer: Record<string, unknown>;
}

interface Scenario {
  steps: Step[];
  /** Records the calls leave, `account/tag` -> fee. */
  charges: Array<[string, bigint]>;
}

/** Scenario i: what is sent, through which agent, what must be answered, and what it charges. */
function plan(i: number, base: number): Scenario {
  const kind = i % 20;
  const caller = CALLERS[(i + Math.floor(i / 20)) % CALLERS.length];
  const tag = `call-${i}`;
  const seconds = 1 + ((i * 37) % 240);
  const begin = new Date(base + i * 1000);
  const end = new Date(begin.getTime() + seconds * 1000);
  const a = i % 2;
  const b = 1 - a;
  const call = { transaction_tag: tag, account_tag: caller, source: `100${i}`, destination: `39${3200000 + i}` };
  const ok = { ok: true, reason: null, transaction_tag: tag, account_tag: caller };
  const refused = (reason: string, transactionTag = tag) => ({ ok: false, reason, transaction_tag: transactionTag, account_tag: caller });
  const beginStep = (agent: number, answer: Record<string, unknown> = ok): Step => ({
    agent,
    route: 'begin_transaction',
    body: { ...call, timestamp_begin: begin.toISOString() },
    answer,
  });
  const endStep = (agent: number): Step => ({
    agent,
    route: 'end_transaction',
    body: { transaction_tag: tag, account_tag: caller, timestamp_end: end.toISOString() },
    answer: ok,
  });
  const recordStep = (agent: number, answer: Record<string, unknown> = ok): Step => ({
    agent,
    route: 'record_transaction',
    body: { ...call, timestamp_begin: begin.toISOString(), timestamp_end: end.toISOString() },
    answer,
  });
  const rollbackStep = (agent: number, transactionTag = tag, answer: Record<string, unknown> = ok): Step => ({
    agent,
    route: 'rollback_transaction',
    body: { transaction_tag: transactionTag, account_tag: caller },
    answer,
  });
  const parent = PARENT[caller];
  const charged: Array<[string, bigint]> = [
    [`${caller}/${tag}`, callerFee(seconds)],
    ...(parent ? [[`${parent}/${tag}`, parentFee(seconds)] as [string, bigint]] : []),
  ];

  if (kind < 12) return { steps: [beginStep(a), endStep(b)], charges: charged };
  switch (kind) {
    case 12:
      return { steps: [recordStep(a)], charges: charged };
    case 13:
      return { steps: [recordStep(a), recordStep(b, refused('DUPLICATE_TRANSACTION'))], charges: charged };
    case 14:
      return { steps: [beginStep(a), rollbackStep(b)], charges: [] };
    case 15:
      return { steps: [recordStep(a), rollbackStep(b)], charges: [] };
    case 16:
      // The rollback races the processing of the ended call: refunded or never charged, either way gone.
      return { steps: [beginStep(a), endStep(b), rollbackStep(a)], charges: [] };
    case 17: {
      const probe = `probe${Math.floor(i / 20) % 4}`;
      const balance = OPENING[probe];
      return {
        steps: [
          {
            agent: a,
            route: 'authorization',
            body: { transaction_tag: `auth-${i}`, account_tag: probe, destination: call.destination },
            // The largest u with fee(u + 2 s headroom) = 1 + u + 2 <= balance.
            answer: {
              authorized: true,
              unauthorized_reason: null,
              max_available_units: Number(balance) - 3,
              balance: String(balance),
              carriers: ['UDP:c1.example.net:5060'],
              transaction_tag: `auth-${i}`,
              account_tag: probe,
              destination_account_tag: null,
              authorized_destination: true,
              unauthorized_account_tag: null,
            },
          },
        ],
        charges: [],
      };
    }
    case 18: {
      const ghost = `ghost-${i}`;
      return {
        steps: [
          {
            agent: a,
            route: 'end_transaction',
            body: { transaction_tag: ghost, account_tag: caller, timestamp_end: end.toISOString() },
            answer: refused('NOT_FOUND', ghost),
          },
          rollbackStep(b, ghost, refused('NOT_FOUND', ghost)),
        ],
        charges: [],
      };
    }
    default:
      return { steps: [beginStep(a), beginStep(b, refused('DUPLICATE_TRANSACTION')), endStep(a)], charges: charged };
  }
}

describe('two agents, three worker processes, one worker killed (issue 13)', () => {
  let ctx: TestContext;
  const agents: AgentProcess[] = [];
  const workers: WorkerProcess[] = [];
  /** The replacement worker's start, awaited before cleaning up so it cannot outlive the test. */
  let replacement: Promise<void> | undefined;

  beforeAll(async () => {
    ctx = await createTestContext({ JOB_LOCK_MS: '2000', AGENT_TIMEOUT_MS: String(AGENT_TIMEOUT_MS) });
    await seed(ctx, {
      carriers: [carrier('c1')],
      pricelists: [pricelist('pl'), pricelist('ppl')],
      rates: [
        rate('pl', 'c1', '39', { rate: 60, rate_increment: 1, connect_fee: 1 }),
        rate('ppl', 'c1', '39', { rate: 120, rate_increment: 1, connect_fee: 0 }),
      ],
      accounts: Object.entries(OPENING).map(([tag, balance]) =>
        account(tag, {
          balance,
          pricelist_tags: tag.startsWith('p') && !tag.startsWith('probe') ? ['ppl'] : ['pl'],
          linked_accounts: PARENT[tag] ? [PARENT[tag]!] : [],
        }),
      ),
    });
    const started = await Promise.allSettled([
      ...[0, 1].map(() => startAgentProcess(ctx.config).then((a) => agents.push(a))),
      ...[0, 1, 2].map(() => startWorkerProcess(ctx.config, WORKER_ENV).then((w) => workers.push(w))),
    ]);
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
  }, 90_000);

  afterAll(async () => {
    await replacement?.catch(() => undefined);
    await stopAll([...agents, ...workers]);
    await ctx?.destroy();
  }, 60_000);

  it('answers every request through the agent that asked and keeps every balance exact', async () => {
    const t0 = Date.now();
    const prefix = ctx.config.queuePrefix;

    // Every reply any worker publishes for this test's prefix: inbox and job.
    const replies: Array<{ inbox: string; job: string }> = [];
    const monitor = ctx.newRedis();
    monitor.on('pmessage', (_pattern: string, channel: string, message: string) => {
      replies.push({
        inbox: channel.slice(channel.lastIndexOf(':replies:') + ':replies:'.length),
        job: (JSON.parse(message) as { job: string }).job,
      });
    });
    await monitor.psubscribe(`*${prefix}*:replies:*`);
    // Every job the agents add to the call queue, and every job put back after its worker died.
    const added = new Map<string, CallJob<TransactionJob>>();
    let putBack = 0;
    const commands = await openMonitor(ctx.redis as Redis);
    commands.onCommand((args, byScript) => {
      if (args[1] !== callQueueKey(prefix)) return;
      if (args[0] === 'rpush' && byScript) putBack += args.length - 2;
      if (args[0] !== 'lpush' || byScript) return;
      for (const raw of args.slice(2)) {
        const { job } = readDelivery<TransactionJob>(raw);
        added.set(job.id, job);
      }
    });

    // Whole seconds, ten minutes ago: calls are short and in the past, so running ones owe little.
    const base = Math.floor(Date.now() / 1000) * 1000 - 600_000;
    const scenarios = Array.from({ length: SCENARIOS }, (_, i) => plan(i, base));

    const mismatches: Array<{
      scenario: number;
      step: number;
      agent: number;
      route: Route;
      status: number;
      expected: unknown;
      answer: unknown;
    }> = [];
    const sent: Array<{ agent: number; key: string; ms: number }> = [];
    let next = 0;
    let finished = 0;
    let killed: Promise<void> | undefined;
    let killedAt = 0;

    const runner = async () => {
      for (let i = next++; i < scenarios.length; i = next++) {
        for (const [s, step] of scenarios[i].steps.entries()) {
          const result = await agents[step.agent].rest(`/v1/${step.route}`, step.body);
          sent.push({ agent: step.agent, key: `${OP[step.route]}|${step.body.account_tag}|${step.body.transaction_tag}`, ms: result.ms });
          if (result.status !== 200 || JSON.stringify(sorted(result.body)) !== JSON.stringify(sorted(step.answer))) {
            mismatches.push({
              scenario: i,
              step: s,
              agent: step.agent,
              route: step.route,
              status: result.status,
              expected: step.answer,
              answer: result.body,
            });
          }
        }
        finished += 1;
        if (finished === KILL_AFTER) {
          killedAt = Date.now() - t0;
          killed = workers[0].kill(); // SIGKILL while the other 15 runners have requests in flight
        }
        if (finished === REPLACE_AFTER) replacement = startWorkerProcess(ctx.config, WORKER_ENV).then((w) => void workers.push(w));
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, runner));
    await killed;
    await replacement;
    const requestsDone = Date.now() - t0;

    expect(mismatches).toEqual([]);
    expect(workers[0].child.signalCode).toBe('SIGKILL');

    // The workers are done: no running entry, no job waiting or in hand, nothing in flight in the ledger.
    const { accounts, transactions } = ctx.mongo.collections;
    const left = async () => {
      const running = await accounts
        .find({ 'running_transactions.0': { $exists: true } }, { projection: { account_tag: 1, running_transactions: 1 } })
        .toArray();
      const [queuedTransactions, queuedProcessing] = await Promise.all([
        ctx.queues.transactions.unfinished().then((unfinished) => ({ unfinished })),
        ctx.queues.processing.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'paused', 'waiting-children'),
      ]);
      const audit = await auditLedger(ctx.mongo.collections);
      const count =
        running.length +
        [queuedTransactions, queuedProcessing].reduce((sum, c) => sum + Object.values(c).reduce((x, y) => x + y, 0), 0) +
        audit.pending_markers +
        audit.records_in_flight;
      return { count, running, queuedTransactions, queuedProcessing, audit };
    };
    // What is left for the recovery sweep once the queues are drained: ledger markers, with whether
    // their entry is written and their record's state.
    const { ledger } = ctx.mongo.collections;
    const markers = async () => {
      const found = [];
      for (const acc of await accounts.find({ 'ledger_pending.0': { $exists: true } }).toArray()) {
        for (const m of acc.ledger_pending ?? []) {
          const record = m.ref ? await transactions.findOne({ _id: m.ref }, { projection: { state: 1, charged_by: 1 } }) : null;
          found.push({
            account_tag: acc.account_tag,
            op: m.op,
            amount: String(m.amount),
            age_ms: Date.now() - m.at.getTime(),
            entry_written: (await ledger.countDocuments({ _id: m.op })) === 1,
            record_state: record?.state ?? null,
            charged_by: record?.charged_by ?? null,
          });
        }
      }
      return found;
    };
    let leftForSweep: { at_ms: number; markers: unknown[]; audit_differences: unknown[] } | undefined;
    const settleUntil = Date.now() + 45_000;
    for (let state = await left(); state.count > 0; state = await left()) {
      const drained = state.running.length === 0 && state.count === state.audit.pending_markers + state.audit.records_in_flight;
      if (drained && !leftForSweep) {
        leftForSweep = {
          at_ms: Date.now() - t0,
          markers: await markers(),
          audit_differences: state.audit.differences.map((d) => ({
            ...d,
            balance_difference: String(d.balance_difference),
            records_difference: String(d.records_difference),
          })),
        };
      }
      if (Date.now() > settleUntil)
        throw new Error(
          `the workers did not finish within 45 s: ${JSON.stringify(state, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v), 1)}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const settled = Date.now() - t0;

    // Nothing failed on the way.
    expect(await ctx.queues.processing.getJobCounts('failed')).toEqual({ failed: 0 });

    // Balances: opening minus the fees of acknowledged calls, parents on their own pricelist.
    const expectedRecords = new Map<string, bigint>(scenarios.flatMap((s) => s.charges));
    const expectedBalance = new Map(Object.entries(OPENING));
    for (const [key, fee] of expectedRecords) {
      const tag = key.split('/')[0];
      expectedBalance.set(tag, expectedBalance.get(tag)! - fee);
    }
    const stored = await accounts.find({}).toArray();
    expect(Object.fromEntries(stored.map((a: AccountDoc) => [a.account_tag, a.balance]))).toEqual(Object.fromEntries(expectedBalance));
    expect(stored.every((a) => a.running_transactions.length === 0)).toBe(true);

    // One charged record per acknowledged call and party, with its fee; rolled-back calls left none.
    const records = await transactions.find({}).toArray();
    const byKey = (list: Array<[string, unknown]>) => Object.fromEntries([...list].sort(([x], [y]) => x.localeCompare(y)));
    expect(byKey(records.map((r) => [`${r.account_tag}/${r.transaction_tag}`, `${r.fee}:${r.state}`]))).toEqual(
      byKey([...expectedRecords].map(([key, fee]) => [key, `${fee}:charged`])),
    );
    expect(records).toHaveLength(expectedRecords.size);

    const audit = await auditLedger(ctx.mongo.collections);
    expect(audit.differences).toEqual([]);
    expect(audit).toMatchObject({
      pending_markers: 0,
      records_in_flight: 0,
      records: expectedRecords.size,
      accounts: Object.keys(OPENING).length,
    });

    // Each answer came through the asking agent's inbox: every job is addressed to the agent that
    // enqueued it (one inbox per agent, two different ones), its reply was published to that address,
    // and no answer waited for AGENT_TIMEOUT_MS (what a lost or misdirected reply would cost).
    await monitor.punsubscribe();
    commands.close();
    const jobs = [...added.values()];
    expect(jobs).toHaveLength(sent.length);
    const inboxOfJob = new Map(jobs.map((j) => [j.id, j.data.reply_to]));
    const addressed = new Map<string, string[]>();
    for (const job of jobs) {
      const data = job.data as TransactionJob & { account_tag?: string; transaction_tag?: string | null };
      const key = `${data.op}|${data.account_tag}|${data.transaction_tag}`;
      addressed.set(key, [...(addressed.get(key) ?? []), job.data.reply_to ?? 'none'].sort());
    }
    const inboxes = [0, 1].map(
      (agent) =>
        new Set(
          sent
            .filter((r) => r.agent === agent)
            .map((r) => addressed.get(r.key))
            .flat(),
        ),
    );
    // Keys sent twice (a duplicate record) went through both agents: judge the agents by the keys sent once.
    const once = (agent: number) =>
      new Set(
        sent.filter((r) => r.agent === agent && sent.filter((o) => o.key === r.key).length === 1).map((r) => addressed.get(r.key)![0]),
      );
    const [inboxA, inboxB] = [once(0), once(1)];
    expect(inboxA.size).toBe(1);
    expect(inboxB.size).toBe(1);
    const [a, b] = [[...inboxA][0], [...inboxB][0]];
    expect(a).not.toBe(b);
    expect(new Set([...inboxes[0], ...inboxes[1]])).toEqual(new Set([a, b]));
    for (const key of new Set(sent.map((r) => r.key))) {
      const expected = sent
        .filter((r) => r.key === key)
        .map((r) => [a, b][r.agent])
        .sort();
      expect({ key, inboxes: addressed.get(key) }).toEqual({ key, inboxes: expected });
    }
    const unanswered = jobs.filter((j) => !replies.some((r) => r.job === j.id));
    expect(unanswered.map((j) => j.id)).toEqual([]);
    expect(replies.filter((r) => r.inbox !== inboxOfJob.get(r.job))).toEqual([]);
    const slowest = Math.max(...sent.map((r) => r.ms));
    expect(slowest).toBeLessThan(AGENT_TIMEOUT_MS - 3_000);

    const rerun = putBack;
    console.log(
      `${sent.length} requests (${SCENARIOS} calls) over 2 agents in ${requestsDone} ms, settled at ${settled} ms; worker killed at ${killedAt} ms; ` +
        `${rerun} transaction jobs re-run after the kill; ${replies.length} replies for ${jobs.length} jobs; slowest answer ${slowest} ms; ` +
        `${records.length} records, ${audit.ledger_entries} ledger entries` +
        (leftForSweep ? `; left for the recovery sweep once the queues were drained: ${JSON.stringify(leftForSweep)}` : ''),
    );
  });
});

/** A plain object with its keys sorted, for a comparison that ignores key order. */
function sorted(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([x], [y]) => x.localeCompare(y)));
}
