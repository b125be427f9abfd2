/**
 * test:sip (issue 11, parts 6 and 7): the SIP lab. Real calls through Kamailio 5.6 running
 * examples/kamailio/kamailio.cfg, in front of the service as `npm start` runs it, with SIPp as callers and
 * carriers, all on loopback ports of their own:
 *
 *   SIPp UAC (callers) --UDP--> Kamailio --HTTP /v1/*--> agent (npm start: API, agent, workers,
 *                                   |                     local Redis + MongoDB-wire server, fresh data)
 *                                   +--UDP--> SIPp UAS carriers: A answers, B answers 503, C rings until cancelled
 *
 * Installs what is missing with apt-get (kamailio, kamailio-utils-modules, kamailio-extra-modules,
 * sip-tester), seeds carriers, a pricelist and accounts through the management GraphQL API, places calls
 * with the scenarios in test/sip/scenarios/ and reads the outcome back through the management API:
 *
 *   1. a completed call is charged for its real duration (the proxy's microsecond timestamps, a started
 *      second billed whole: a call held 4.1 s costs 5 s, not 6); and the same through a second Kamailio
 *      started with -A DESTINATION_AS_URI (the destination sent as the request URI, rated on its user part);
 *   2. a call cut by the proxy at max_available_units leaves the prepaid balance >= 0;
 *   3. an unknown and an inactive account get 403 before routing (no carrier sees the INVITE);
 *   4. five simultaneous calls on an account limited to 2: three get 403 TOO_MANY_RUNNING_TRANSACTIONS
 *      before routing, and the account never holds more than 2 running entries;
 *   5. a 503 from the first carrier fails over to the second, and the call is charged at that carrier;
 *   6. a call that fails after its authorization (every carrier refused it; the caller cancelled while it
 *      rang) releases its concurrency reservation at once (rollback): on an account limited to 1, the
 *      next call is routed, not refused;
 *   7. the cheapest carrier answers 503 and the call fails over to a dearer one, where the proxy cuts it at
 *      the grant: the grant held on every listed carrier, so the prepaid balance stays >= 0 (issue 31);
 *   8. a switch not asked to rate (issue 35): Kamailio with examples/kamailio/kamailio-cdr.cfg writes its
 *      own acc files (db_flatstore: the acc table's INVITE and BYE rows, and dialog CDRs in acc_cdrs),
 *      `rating import` reads them (--map examples/kamailio/acc-time-attr.map.json, --format
 *      kamailio-cdrs), and each call is charged what the real-time path charges for it: the stamps
 *      examples/kamailio/kamailio.cfg would have sent (logged by the same Kamailio) are sent as begin and
 *      end for a twin account, and the two records' durations and fees must be equal.
 *
 *   npm run test:sip -- [--keep] [--config FILE]
 *     --keep    leave the temp dir with every log (Kamailio, SIPp callers and carriers, the service)
 *     --config  another Kamailio config to put to the same test (default examples/kamailio/kamailio.cfg);
 *               it gets the same -A defines: LISTEN, AGENT_URL, AGENT_TOKEN, DESTINATION_AS_URI
 *
 * Last line: `sip lab: 8 checks passed, <n> calls (Kamailio <v>, SIPp <v>)`. Any failure exits non-zero
 * with the reason and the tails of Kamailio's and SIPp's logs. Every process it starts is stopped on the
 * way out (also on failure, SIGINT and SIGTERM), and a watchdog bounds the whole run.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sleep, withParentDeathSignal } from '../../src/shared/infra/services/process-tools';
import { ServiceProcess } from '../support/service-process';
import { postJson } from '../support/http-json';
import { ensurePackages, versionOf } from '../support/apt';
import { testPort } from '../support/ports';

const ROOT = path.resolve(__dirname, '..', '..');
const DEFAULT_CONFIG = path.join(ROOT, 'examples', 'kamailio', 'kamailio.cfg');
/** Check 8: the switch that writes CDR files instead of asking the agent, and the mapping of its acc rows. */
const CDR_CONFIG = path.join(ROOT, 'examples', 'kamailio', 'kamailio-cdr.cfg');
const ACC_MAP = path.join(ROOT, 'examples', 'kamailio', 'acc-time-attr.map.json');
let config = DEFAULT_CONFIG;
const SCENARIOS = path.join(__dirname, 'scenarios');
const HOST = '127.0.0.1';
const PACKAGES = ['kamailio', 'kamailio-utils-modules', 'kamailio-extra-modules', 'kamailio-tls-modules', 'sip-tester'];
/**
 * The whole run after the packages are in place (apt-get has its own time limits), service start
 * included: far above a normal run (about 25 s).
 */
const WATCHDOG_MS = 5 * 60_000;

/** Destination dialled in every call: prefix 39 of the lab pricelist. */
const DESTINATION = '39061234567';
/** Carrier A answers at 60/min (1 per second); B (the 503 one) and C (rings) would cost more. */
const RATE_A = 60;
/** Check 11: two calls at RATE_A (1 a second) share this prepaid balance. */
const SHARED_BALANCE = 30;
const RATE_B = 120;
const RATE_C = 90;
/**
 * Check 7 (issue 31, defect 1): for "tight", carrier B is the cheapest (and answers 503) and A the
 * dearest; its grant must hold on A, where the call goes out and is cut.
 */
const RATE_B_CHEAP = 30;
const RATE_A_DEAR = 240;
const TIGHT_BALANCE = 20;

class LabFailure extends Error {}

function fail(message: string): never {
  throw new LabFailure(message);
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

// ============================================================================ processes

interface Started {
  name: string;
  child: ChildProcess;
  log: string;
  exited: Promise<number | null>;
}

const started: Started[] = [];
/** Set once the run is being torn down (a failure, SIGINT, the watchdog): nothing new is started. */
let stopping = false;

/**
 * A child in its own process group (Kamailio forks workers; the group is stopped as one), with its
 * output in `logFile`, and SIGTERM from the kernel if this process dies (setpriv --pdeathsig).
 */
function startProcess(name: string, command: string, args: string[], logFile: string, env?: NodeJS.ProcessEnv): Started {
  if (stopping) throw new LabFailure(`not starting ${name}: the lab is stopping`);
  const out = openSync(logFile, 'a');
  const [cmd, argv] = withParentDeathSignal(command, args);
  const child = spawn(cmd, argv, { cwd: path.dirname(logFile), stdio: ['ignore', out, out], detached: true, env });
  closeSync(out);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', () => resolve(-1));
  });
  const s: Started = { name, child, log: logFile, exited };
  started.push(s);
  return s;
}

function running(s: Started): boolean {
  return s.child.exitCode === null && s.child.signalCode === null;
}

function signalGroup(s: Started, signal: NodeJS.Signals): void {
  if (!s.child.pid) return;
  try {
    process.kill(-s.child.pid, signal);
  } catch {
    try {
      s.child.kill(signal);
    } catch {
      // already gone
    }
  }
}

/** SIGTERM every process group this run started, SIGKILL what is left after 5 s. */
async function stopAll(): Promise<void> {
  stopping = true;
  const live = started.filter(running);
  for (const s of live) signalGroup(s, 'SIGTERM');
  await Promise.race([Promise.all(live.map((s) => s.exited)), sleep(5000)]);
  for (const s of started) {
    // The group may outlive its leader (forked workers): SIGKILL it regardless.
    signalGroup(s, 'SIGKILL');
  }
}

function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .slice(-lines - 1)
      .join('\n');
  } catch {
    return '(no output)';
  }
}

// ============================================================================ ports and SIP

/** A free UDP port on loopback (the kernel's pick, released at once). */
async function freeUdpPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const socket = dgram.createSocket('udp4');
      socket.once('error', reject);
      socket.bind(0, HOST, () => {
        const p = socket.address().port;
        socket.close(() => resolve(p));
      });
    });
    if (!taken.has(port)) {
      taken.add(port);
      return port;
    }
  }
}

/** Whether something answers SIP on the port: an OPTIONS, any response within 500 ms. */
async function sipAnswers(port: number): Promise<boolean> {
  const socket = dgram.createSocket('udp4');
  try {
    return await new Promise<boolean>((resolve) => {
      socket.once('error', () => resolve(false));
      socket.on('message', (msg) => resolve(msg.toString().startsWith('SIP/2.0 ')));
      socket.bind(0, HOST, () => {
        const local = socket.address().port;
        const branch = `z9hG4bK${randomBytes(6).toString('hex')}`;
        const request = [
          `OPTIONS sip:ping@${HOST}:${port} SIP/2.0`,
          `Via: SIP/2.0/UDP ${HOST}:${local};branch=${branch}`,
          `From: <sip:lab@${HOST}:${local}>;tag=${branch}`,
          `To: <sip:ping@${HOST}:${port}>`,
          `Call-ID: ping-${branch}@lab`,
          'CSeq: 1 OPTIONS',
          'Max-Forwards: 70',
          'Content-Length: 0',
          '',
          '',
        ].join('\r\n');
        socket.send(request, port, HOST);
      });
      setTimeout(() => resolve(false), 500);
    });
  } finally {
    socket.close();
  }
}

// ============================================================================ the service

let service: ServiceProcess | undefined;
let token = '';

const post = (url: string, body: unknown) => postJson(url, body, { token });

async function gql<T = Record<string, unknown>>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const a = await post(`${service!.apiUrl}/graphql`, { query, variables });
  const body = a.json as { data?: T; errors?: unknown[] } | undefined;
  if (a.status !== 200 || body?.errors?.length)
    fail(`management API request failed (${a.status}): ${(body === undefined ? a.text : JSON.stringify(body)).slice(0, 500)}`);
  return body!.data!;
}

interface Lab {
  dir: string;
  kamailioPort: number;
  /** The second Kamailio, started with -A DESTINATION_AS_URI. */
  uriKamailioPort: number;
  carrierA: number;
  carrierB: number;
  carrierC: number;
  uasA: Started;
  uasB: Started;
  uasC: Started;
  kamailio: Started;
  uriKamailio: Started;
  ports: Set<number>;
  calls: number;
}

async function seed(lab: Lab): Promise<void> {
  await gql(`mutation {
    a: createCarrier(carrier_tag: "carrier-a", host: "${HOST}", port: ${lab.carrierA}, protocol: UDP) { id }
    b: createCarrier(carrier_tag: "carrier-b", host: "${HOST}", port: ${lab.carrierB}, protocol: UDP) { id }
    c: createCarrier(carrier_tag: "carrier-c", host: "${HOST}", port: ${lab.carrierC}, protocol: UDP) { id }
    p: createPricelist(pricelist_tag: "lab", name: "sip lab", currency: EUR) { id }
  }`);
  await gql(`mutation {
    a: createPricelistRate(pricelist_tag: "lab", carrier_tag: "carrier-a", prefix: "39", connect_fee: 0, rate: ${RATE_A}, rate_increment: 1, interval_start: 0) { id }
    b: createPricelistRate(pricelist_tag: "lab", carrier_tag: "carrier-b", prefix: "39", connect_fee: 0, rate: ${RATE_B}, rate_increment: 1, interval_start: 0) { id }
    c: createPricelistRate(pricelist_tag: "lab", carrier_tag: "carrier-c", prefix: "39", connect_fee: 0, rate: ${RATE_C}, rate_increment: 1, interval_start: 0) { id }
    p2: createPricelist(pricelist_tag: "lab-cheap-b", name: "carrier B cheapest", currency: EUR) { id }
  }`);
  await gql(`mutation {
    a: createPricelistRate(pricelist_tag: "lab-cheap-b", carrier_tag: "carrier-a", prefix: "39", connect_fee: 0, rate: ${RATE_A_DEAR}, rate_increment: 1, interval_start: 0) { id }
    b: createPricelistRate(pricelist_tag: "lab-cheap-b", carrier_tag: "carrier-b", prefix: "39", connect_fee: 0, rate: ${RATE_B_CHEAP}, rate_increment: 1, interval_start: 0) { id }
  }`);
  await gql(`mutation {
    rich: createAccount(account_tag: "rich", type: PREPAID, balance: "100000", pricelist_tags: ["lab"]) { id }
    poor: createAccount(account_tag: "poor", type: PREPAID, balance: "3", pricelist_tags: ["lab"]) { id }
    slowack: createAccount(account_tag: "slowack", type: PREPAID, balance: "14", pricelist_tags: ["lab"]) { id }
    shared: createAccount(account_tag: "shared", type: PREPAID, balance: "${SHARED_BALANCE}", carrier_tags_override: ["carrier-a"], pricelist_tags: ["lab"]) { id }
    off: createAccount(account_tag: "off", type: PREPAID, balance: "100000", active: false, pricelist_tags: ["lab"]) { id }
    duo: createAccount(account_tag: "duo", type: PREPAID, balance: "100000", max_concurrent_transactions: 2, pricelist_tags: ["lab"]) { id }
    detour: createAccount(account_tag: "detour", type: PREPAID, balance: "100000", carrier_tags: ["carrier-b"], pricelist_tags: ["lab"]) { id }
    deadend: createAccount(account_tag: "deadend", type: PREPAID, balance: "100000", max_concurrent_transactions: 1, carrier_tags_override: ["carrier-b"], pricelist_tags: ["lab"]) { id }
    replayer: createAccount(account_tag: "replayer", type: PREPAID, balance: "100000", carrier_tags_override: ["carrier-a"], pricelist_tags: ["lab"]) { id }
    ringer: createAccount(account_tag: "ringer", type: PREPAID, balance: "100000", max_concurrent_transactions: 1, carrier_tags_override: ["carrier-c"], pricelist_tags: ["lab"]) { id }
    tight: createAccount(account_tag: "tight", type: PREPAID, balance: "${TIGHT_BALANCE}", carrier_tags_override: ["carrier-b", "carrier-a"], pricelist_tags: ["lab-cheap-b"]) { id }
  }`);
  // Check 8: the callers of the CDR-writing Kamailio, and their twins charged through the real-time path.
  await gql(`mutation {
    t: createAccount(account_tag: "cdr-acc", type: PREPAID, balance: "100000", pricelist_tags: ["lab"]) { id }
    d: createAccount(account_tag: "cdr-dlg", type: PREPAID, balance: "100000", pricelist_tags: ["lab"]) { id }
    tt: createAccount(account_tag: "twin-cdr-acc", type: PREPAID, balance: "100000", pricelist_tags: ["lab"]) { id }
    td: createAccount(account_tag: "twin-cdr-dlg", type: PREPAID, balance: "100000", pricelist_tags: ["lab"]) { id }
  }`);
}

interface AccountState {
  balance: bigint;
  running: number;
}

async function account(tag: string): Promise<AccountState> {
  const data = await gql<{ Account: { balance: string; running_transactions: unknown[] } | null }>(
    'query ($tag: String) { Account(account_tag: $tag) { balance running_transactions { transaction_tag } } }',
    { tag },
  );
  if (!data.Account) fail(`account ${tag} is missing`);
  return { balance: BigInt(data.Account.balance), running: data.Account.running_transactions.length };
}

/**
 * The account once its calls are processed: no running entry left and, when given, the balance expected.
 * Processing writes the record before it debits the balance and removes the entry, so a record alone
 * does not mean the balance is final. Bounded wait; the caller's checks judge what it returns.
 */
async function settled(tag: string, expectedBalance?: bigint, withinMs = 15_000): Promise<AccountState> {
  const until = Date.now() + withinMs;
  for (;;) {
    const a = await account(tag);
    if (a.running === 0 && (expectedBalance === undefined || a.balance === expectedBalance)) return a;
    if (Date.now() > until) return a;
    await sleep(200);
  }
}

interface CallRecord {
  transaction_tag: string;
  account_tag: string;
  destination: string;
  carrier_ip: string | null;
  timestamp_begin: string;
  timestamp_end: string;
  duration: number;
  fee: string;
}

/**
 * The Call-ID a record belongs to. The config tags a call `<Call-ID>/<seconds.microseconds>` (docs/SIP.md,
 * "The transaction tag"); check 8's own begins and imports tag a call by its Call-ID alone.
 */
const callIdOf = (tag: string) => tag.replace(/\/\d+\.\d+$/, '');

/** The records of these calls (by Call-ID), every tag of each: a lab holds a few dozen records. */
async function records(callIds: string[]): Promise<CallRecord[]> {
  const data = await gql<{ allTransactions: CallRecord[] }>(
    `query { allTransactions(perPage: 1000) {
      transaction_tag account_tag destination carrier_ip timestamp_begin timestamp_end duration fee } }`,
  );
  const wanted = new Set(callIds);
  return data.allTransactions.filter((r) => wanted.has(callIdOf(r.transaction_tag)));
}

/** The calls' records by Call-ID, once processing has written them all (bounded wait). */
async function recordsOf(callIds: string[], withinMs = 30_000): Promise<Map<string, CallRecord>> {
  const until = Date.now() + withinMs;
  for (;;) {
    const found = new Map((await records(callIds)).map((r) => [callIdOf(r.transaction_tag), r]));
    if (callIds.every((t) => found.has(t))) return found;
    if (Date.now() > until)
      fail(`no transaction record for ${callIds.filter((t) => !found.has(t)).join(', ')} within ${withinMs / 1000} s`);
    await sleep(250);
  }
}

// ============================================================================ calls

interface CallResult {
  label: string;
  callId: string;
  outcome: 'answered' | 'refused';
  /** `403 NOT_FOUND`, `503 ...` for refusals. */
  refusal: string;
  /** The proxy ended the call with its own BYE (uac_wait_bye.xml). */
  cut: boolean;
  exitCode: number | null;
  log: string;
}

/** One SIPp caller, one call; resolves when SIPp exits (bounded by its own -timeout). */
async function call(
  lab: Lab,
  label: string,
  caller: string,
  options: { scenario?: string; holdMs?: number; destination?: string; proxyPort?: number; callId?: string } = {},
): Promise<CallResult> {
  const scenario = options.scenario ?? 'uac_call.xml';
  const port = await freeUdpPort(lab.ports);
  const logFile = path.join(lab.dir, `call-${label}.log`);
  const actions = path.join(lab.dir, `call-${label}.actions.log`);
  const errors = path.join(lab.dir, `call-${label}.errors.log`);
  lab.calls++;
  const s = startProcess(
    `sipp caller ${label}`,
    'sipp',
    [
      `${HOST}:${options.proxyPort ?? lab.kamailioPort}`,
      '-sf',
      path.join(SCENARIOS, scenario),
      '-i',
      HOST,
      '-p',
      String(port),
      '-m',
      '1',
      '-s',
      options.destination ?? DESTINATION,
      '-key',
      'caller',
      caller,
      '-d',
      String(options.holdMs ?? 1000),
      '-cid_str',
      // A fixed Call-ID: a caller sending an earlier call's again (check 9).
      options.callId ?? `lab-${label}-%u-%p@%s`,
      '-trace_logs',
      '-log_file',
      actions,
      '-trace_err',
      '-error_file',
      errors,
      '-trace_msg',
      '-message_file',
      path.join(lab.dir, `call-${label}.messages.log`),
      '-nostdin',
      '-timeout',
      '90s',
      '-timeout_error',
    ],
    logFile,
  );
  const exitCode = await s.exited;
  const text = existsSync(actions) ? readFileSync(actions, 'utf8') : '';
  const refused = /OUTCOME refused (\d{3}) (.*) (\S+)\s*$/m.exec(text);
  const answered = /OUTCOME answered (\S+)/.exec(text);
  const cut = /OUTCOME cut (\S+)/.test(text);
  const failureDetail = () => `\n--- ${path.basename(logFile)}\n${tail(logFile, 15)}\n--- ${path.basename(errors)}\n${tail(errors, 20)}`;
  if (!refused && !answered) fail(`call ${label} (${caller}): SIPp exited ${exitCode} without an outcome${failureDetail()}`);
  if (exitCode !== 0) fail(`call ${label} (${caller}): SIPp exited ${exitCode} (the scenario failed)${failureDetail()}`);
  return {
    label,
    callId: (answered?.[1] ?? refused?.[3])!,
    outcome: answered ? 'answered' : 'refused',
    refusal: refused ? `${refused[1]} ${refused[2]}` : '',
    cut,
    exitCode,
    log: actions,
  };
}

/** Call-IDs of the INVITEs a carrier UAS has seen. */
function invitesSeen(uas: Started): Set<string> {
  const file = uas.log.replace(/\.log$/, '.actions.log');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  return new Set([...text.matchAll(/^INVITE (\S+)/gm)].map((m) => m[1]));
}

function expect(condition: boolean, message: string): void {
  if (!condition) fail(message);
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

// ============================================================================ the checks

/** 1. A completed call is charged for its real duration, as the proxy stamped it. */
async function checkCompleted(lab: Lab): Promise<void> {
  const before = await account('rich');
  // Held 4.1 s by the caller, the call lasts a little longer at the proxy (the 200 OK and the BYE cross
  // it, and the answer is stamped before the begin request): up to 0.9 s of slack before its fifth second.
  const holdMs = 4100;
  const c = await call(lab, 'completed', 'rich', { holdMs });
  expect(c.outcome === 'answered', `check 1: the call of rich was not answered: ${c.refusal}`);
  const r = (await recordsOf([c.callId])).get(c.callId)!;
  const measured = Date.parse(r.timestamp_end) - Date.parse(r.timestamp_begin);
  const after = await settled('rich', before.balance - BigInt(r.fee));
  log(
    `  call held ${seconds(holdMs)} s; proxy stamped ${r.timestamp_begin} .. ${r.timestamp_end} = ${seconds(measured)} s; billed ${r.duration} s, fee ${r.fee}`,
  );
  expect(
    measured >= holdMs && measured < 5000,
    `check 1: the proxy's timestamps span ${seconds(measured)} s for a call held ${seconds(holdMs)} s (expected ${seconds(holdMs)} to 5 s)`,
  );
  expect(
    r.duration === Math.ceil(measured / 1000),
    `check 1: duration ${r.duration} s, but the timestamps span ${seconds(measured)} s (a started second counts as one)`,
  );
  expect(r.duration === 5, `check 1: a call held ${seconds(holdMs)} s was billed ${r.duration} s, not 5`);
  expect(BigInt(r.fee) === BigInt((RATE_A * r.duration) / 60), `check 1: fee ${r.fee} for ${r.duration} s at ${RATE_A}/min`);
  expect(r.carrier_ip === `${HOST}:${lab.carrierA}`, `check 1: carrier_ip ${r.carrier_ip}, expected carrier A ${HOST}:${lab.carrierA}`);
  expect(
    before.balance - after.balance === BigInt(r.fee),
    `check 1: the balance went from ${before.balance} to ${after.balance} for a fee of ${r.fee}`,
  );
  expect(after.running === 0, `check 1: rich still has ${after.running} running entries`);
  expect(invitesSeen(lab.uasA).has(c.callId), 'check 1: carrier A never saw the INVITE');

  // The same through the proxy that sends the request URI: rated on its user part (+ dropped),
  // recorded as sent.
  const u = await call(lab, 'uri-form', 'rich', { holdMs: 1500, destination: `+${DESTINATION}`, proxyPort: lab.uriKamailioPort });
  expect(u.outcome === 'answered', `check 1: the URI-form call was not answered: ${u.refusal}`);
  const ur = (await recordsOf([u.callId])).get(u.callId)!;
  const uMeasured = Date.parse(ur.timestamp_end) - Date.parse(ur.timestamp_begin);
  log(`  URI form: destination "${ur.destination}", ${seconds(uMeasured)} s, billed ${ur.duration} s, fee ${ur.fee}`);
  expect(
    /^sip:\+39061234567@/.test(ur.destination),
    `check 1: the URI-form call was recorded with destination "${ur.destination}", expected the request URI`,
  );
  expect(
    ur.duration === Math.ceil(uMeasured / 1000) && ur.duration === 2,
    `check 1: the URI-form call held 1.5 s was billed ${ur.duration} s (timestamps span ${seconds(uMeasured)} s)`,
  );
  expect(
    BigInt(ur.fee) === BigInt((RATE_A * ur.duration) / 60),
    `check 1: the URI-form call's fee is ${ur.fee} for ${ur.duration} s at ${RATE_A}/min (not rated on its user part?)`,
  );

  // Whole-second stamps would make a bill depend on where the seconds fall (4 or 5 s for the first
  // call). A microsecond stamp is a whole millisecond-second once in 1000: judged over both calls.
  for (const field of ['timestamp_begin', 'timestamp_end'] as const) {
    expect(
      [r, ur].some((x) => Date.parse(x[field]) % 1000 !== 0),
      `check 1: the proxy sent ${field} in whole seconds (${r[field]}, ${ur[field]}): a call's bill then depends on where the seconds fall`,
    );
  }
}

/** 2. A call the proxy cuts at max_available_units never costs more than the balance. */
async function checkCut(lab: Lab): Promise<void> {
  const before = await account('poor');
  // What the agent grants now (no transaction_tag: nothing reserved).
  const auth = await post(`${service!.agentUrl}/v1/authorization`, { account_tag: 'poor', destination: DESTINATION });
  const granted = (auth.json as { max_available_units?: number }).max_available_units;
  const c = await call(lab, 'cut', 'poor', { scenario: 'uac_wait_bye.xml', holdMs: 0 });
  expect(c.outcome === 'answered', `check 2: the call of poor (balance ${before.balance}) was not answered: ${c.refusal}`);
  expect(c.cut, 'check 2: the call was not ended by the proxy');
  const r = (await recordsOf([c.callId])).get(c.callId)!;
  const after = await settled('poor', before.balance - BigInt(r.fee));
  const lasted = Date.parse(r.timestamp_end) - Date.parse(r.timestamp_begin);
  log(
    `  balance ${before.balance}, granted ${granted} s; cut after ${seconds(lasted)} s, billed ${r.duration} s, fee ${r.fee}; balance now ${after.balance}`,
  );
  expect(typeof granted === 'number' && granted >= 1, `check 2: the agent grants ${granted} s to poor (balance ${before.balance})`);
  // The dialog timer ticks once a second: the cut comes within a second of the granted time.
  expect(
    lasted >= (granted! - 1) * 1000 && lasted <= (granted! + 1) * 1000 + 500,
    `check 2: the call lasted ${seconds(lasted)} s, granted ${granted} s: not cut by the dialog timeout`,
  );
  expect(
    after.balance >= 0n,
    `check 2: the balance is ${after.balance} after a call cut at max_available_units (${granted} s): billed ${r.duration} s, fee ${r.fee}`,
  );
  expect(
    after.balance === before.balance - BigInt(r.fee),
    `check 2: the balance went from ${before.balance} to ${after.balance} for a fee of ${r.fee}`,
  );
  expect(after.running === 0, `check 2: poor still has ${after.running} running entries`);
}

/**
 * 10. A caller holding its ACK back 3 s is still cut at its grant counted from the 200 OK: the dialog
 * module restarts its timer at the ACK, and the call is billed from the 200 OK.
 */
async function checkLateAck(lab: Lab): Promise<void> {
  const before = await account('slowack');
  const auth = await post(`${service!.agentUrl}/v1/authorization`, { account_tag: 'slowack', destination: DESTINATION });
  const granted = (auth.json as { max_available_units?: number }).max_available_units;
  const c = await call(lab, 'late-ack', 'slowack', { scenario: 'uac_wait_bye.xml', holdMs: 3000 });
  expect(c.outcome === 'answered', `check 10: the call of slowack was not answered: ${c.refusal}`);
  expect(c.cut, 'check 10: the call was not ended by the proxy');
  const r = (await recordsOf([c.callId])).get(c.callId)!;
  const after = await settled('slowack', before.balance - BigInt(r.fee));
  const lasted = Date.parse(r.timestamp_end) - Date.parse(r.timestamp_begin);
  log(
    `  balance ${before.balance}, granted ${granted} s, ACK 3 s after the 200 OK; cut ${seconds(lasted)} s after it, billed ${r.duration} s, fee ${r.fee}; balance now ${after.balance}`,
  );
  expect(typeof granted === 'number' && granted > 3, `check 10: the agent grants ${granted} s to slowack (balance ${before.balance})`);
  expect(
    lasted <= (granted! + 1) * 1000 + 500,
    `check 10: the call lasted ${seconds(lasted)} s from its 200 OK, granted ${granted} s: the timer restarted at the late ACK`,
  );
  expect(after.balance >= 0n, `check 10: the balance is ${after.balance} after a call cut at its grant (${granted} s), ACK held back 6 s`);
}

/**
 * 11. Two calls of one prepaid account share its balance: each was granted what the balance allowed
 * alone (about 28 s at 1 a second from 30). The engine's END_CALL webhook reaches the proxy as the
 * balance runs out (about 15 s in), and the proxy ends both: the balance ends near 0, not near -28.
 */
async function checkEndCall(lab: Lab): Promise<void> {
  const before = await account('shared');
  const calls = await Promise.all(
    ['shared-1', 'shared-2'].map((label) => call(lab, label, 'shared', { scenario: 'uac_wait_bye.xml', holdMs: 0 })),
  );
  for (const c of calls) {
    expect(c.outcome === 'answered', `check 11: call ${c.label} of shared was not answered: ${c.refusal}`);
    expect(c.cut, `check 11: call ${c.label} was not ended by the proxy`);
  }
  const records = await recordsOf(calls.map((c) => c.callId));
  const fees = calls.map((c) => BigInt(records.get(c.callId)!.fee));
  const lasted = calls.map((c) => Date.parse(records.get(c.callId)!.timestamp_end) - Date.parse(records.get(c.callId)!.timestamp_begin));
  const after = await settled('shared', before.balance - fees[0] - fees[1]);
  log(
    `  balance ${before.balance}, two calls at 1 a second: cut after ${lasted.map(seconds).join(' s and ')} s, fees ${fees.join(' and ')}; balance now ${after.balance}`,
  );
  // Alone, each call was granted about 28 s: ended by END_CALL, both stop about halfway.
  for (const ms of lasted) expect(ms < (SHARED_BALANCE - 8) * 1000, `check 11: a call lasted ${seconds(ms)} s: not ended by END_CALL`);
  // The scan looks a period (1 s) ahead; the webhook, the dialog's 1 s timeout and the stamps add a few seconds a call.
  expect(after.balance >= -8n, `check 11: the balance is ${after.balance} after two calls sharing ${before.balance}: END_CALL came late`);
  expect(after.running === 0, `check 11: shared still has ${after.running} running entries`);
}

/** 3. Unknown and inactive accounts: 403 before routing. */
async function checkRefusedBeforeRouting(lab: Lab): Promise<void> {
  const unknown = await call(lab, 'unknown', 'ghost');
  const inactive = await call(lab, 'inactive', 'off');
  log(`  ghost: ${unknown.refusal || unknown.outcome}; off: ${inactive.refusal || inactive.outcome}`);
  expect(
    unknown.outcome === 'refused' && unknown.refusal === '403 NOT_FOUND',
    `check 3: an unknown account got "${unknown.refusal || unknown.outcome}", expected 403 NOT_FOUND`,
  );
  expect(
    inactive.outcome === 'refused' && inactive.refusal === '403 NOT_ACTIVE',
    `check 3: an inactive account got "${inactive.refusal || inactive.outcome}", expected 403 NOT_ACTIVE`,
  );
  for (const c of [unknown, inactive]) {
    for (const [name, uas] of [
      ['A', lab.uasA],
      ['B', lab.uasB],
      ['C', lab.uasC],
    ] as const) {
      expect(!invitesSeen(uas).has(c.callId), `check 3: carrier ${name} saw the INVITE of the refused call ${c.callId}`);
    }
  }
  const left = await records([unknown.callId, inactive.callId]);
  expect(left.length === 0, `check 3: refused calls left ${left.length} transaction records`);
}

/** 4. Five simultaneous calls on an account limited to 2 concurrent calls. */
async function checkConcurrency(lab: Lab): Promise<void> {
  let maxRunning = 0;
  let polls = 0;
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const a = await account('duo');
      maxRunning = Math.max(maxRunning, a.running);
      polls++;
      await sleep(100);
    }
  })();
  let results: CallResult[];
  try {
    results = await Promise.all([1, 2, 3, 4, 5].map((i) => call(lab, `concurrent-${i}`, 'duo', { holdMs: 3000 })));
  } finally {
    polling = false;
    await poller;
  }
  const answered = results.filter((r) => r.outcome === 'answered');
  const refused = results.filter((r) => r.outcome === 'refused');
  log(
    `  ${answered.length} answered, ${refused.length} refused (${[...new Set(refused.map((r) => r.refusal))].join(', ')}); at most ${maxRunning} running entries in ${polls} polls`,
  );
  expect(answered.length === 2, `check 4: ${answered.length} of 5 simultaneous calls were answered on an account limited to 2`);
  expect(
    refused.length === 3 && refused.every((r) => r.refusal === '403 TOO_MANY_RUNNING_TRANSACTIONS'),
    `check 4: the refusals were ${refused.map((r) => r.refusal).join(', ')}, expected 3 x 403 TOO_MANY_RUNNING_TRANSACTIONS`,
  );
  expect(maxRunning <= 2, `check 4: the account held ${maxRunning} running entries (limit 2)`);
  expect(maxRunning >= 1, 'check 4: the poll never saw a running call (did the calls overlap the polls?)');
  const seen = [lab.uasA, lab.uasB, lab.uasC].map(invitesSeen);
  for (const r of refused)
    expect(
      seen.every((s) => !s.has(r.callId)),
      `check 4: a carrier saw the INVITE of the refused call ${r.callId}`,
    );
  const recs = await recordsOf(answered.map((r) => r.callId));
  for (const r of recs.values()) expect(BigInt(r.fee) > 0n, `check 4: the answered call ${r.transaction_tag} was not charged`);
  const after = await settled('duo');
  expect(after.running === 0, `check 4: duo still has ${after.running} running entries`);
}

/** 5. 503 from the first carrier: failover to the second, charged at that carrier's rate. */
async function checkFailover(lab: Lab): Promise<void> {
  const before = await account('detour');
  const c = await call(lab, 'failover', 'detour', { holdMs: 2200 });
  expect(c.outcome === 'answered', `check 5: the call of detour was not answered: ${c.refusal}`);
  expect(invitesSeen(lab.uasB).has(c.callId), 'check 5: carrier B (503, first for detour) never saw the INVITE');
  expect(invitesSeen(lab.uasA).has(c.callId), 'check 5: carrier A (second) never saw the INVITE');
  const r = (await recordsOf([c.callId])).get(c.callId)!;
  const after = await settled('detour', before.balance - BigInt(r.fee));
  log(`  carrier B answered 503, carrier A answered; carrier_ip ${r.carrier_ip}, billed ${r.duration} s, fee ${r.fee}`);
  expect(r.carrier_ip === `${HOST}:${lab.carrierA}`, `check 5: carrier_ip ${r.carrier_ip}, expected carrier A ${HOST}:${lab.carrierA}`);
  expect(r.duration >= 2 && r.duration <= 4, `check 5: billed ${r.duration} s for a call held 2.2 s`);
  expect(BigInt(r.fee) === BigInt((RATE_A * r.duration) / 60), `check 5: fee ${r.fee} for ${r.duration} s at carrier A's ${RATE_A}/min`);
  expect(
    before.balance - after.balance === BigInt(r.fee),
    `check 5: the balance went from ${before.balance} to ${after.balance} for a fee of ${r.fee}`,
  );
  expect(after.running === 0, `check 5: detour still has ${after.running} running entries`);
}

/**
 * 7. The first carrier, the cheapest, answers 503 and the call fails over to a dearer one, where the
 * proxy cuts it at the granted time: the grant held on every carrier listed, so the prepaid balance
 * never goes below zero (issue 31, defect 1: it was sized on the first carrier's rate).
 */
async function checkFailoverCut(lab: Lab): Promise<void> {
  const before = await account('tight');
  const auth = await post(`${service!.agentUrl}/v1/authorization`, { account_tag: 'tight', destination: DESTINATION });
  const granted = (auth.json as { max_available_units?: number }).max_available_units;
  const c = await call(lab, 'failover-cut', 'tight', { scenario: 'uac_wait_bye.xml', holdMs: 0 });
  expect(c.outcome === 'answered', `check 7: the call of tight was not answered: ${c.refusal}`);
  expect(invitesSeen(lab.uasB).has(c.callId), 'check 7: carrier B (cheapest, 503) never saw the INVITE');
  expect(c.cut, 'check 7: the call was not ended by the proxy');
  const r = (await recordsOf([c.callId])).get(c.callId)!;
  const after = await settled('tight', before.balance - BigInt(r.fee));
  log(
    `  balance ${before.balance}, granted ${granted} s; B answered 503, cut on ${r.carrier_ip} after ${r.duration} s, fee ${r.fee}; balance now ${after.balance}`,
  );
  expect(
    r.carrier_ip === `${HOST}:${lab.carrierA}`,
    `check 7: carrier_ip ${r.carrier_ip}, expected the dearer carrier A ${HOST}:${lab.carrierA}`,
  );
  expect(
    after.balance >= 0n,
    `check 7: the balance is ${after.balance} after a failover call cut at its grant (${granted} s): billed ${r.duration} s at ${RATE_A_DEAR}/min, fee ${r.fee}`,
  );
  expect(after.running === 0, `check 7: tight still has ${after.running} running entries`);
}

/**
 * 6. Authorized, then refused by every carrier, or cancelled by the caller while ringing: the reservation
 * is released at once, not when it expires.
 */
async function checkRollback(lab: Lab): Promise<void> {
  const first = await call(lab, 'rollback-1', 'deadend');
  const second = await call(lab, 'rollback-2', 'deadend');
  log(`  deadend (limit 1, carrier B only): first call "${first.refusal}", second call "${second.refusal}"`);
  const seenB = invitesSeen(lab.uasB);
  // A proxy relays a carrier's 503 as 500 (RFC 3261 16.7): the caller must not take it as "this proxy
  // is unavailable".
  const relayed503 = (c: CallResult) => c.outcome === 'refused' && c.refusal.startsWith('500') && seenB.has(c.callId);
  expect(
    relayed503(first),
    `check 6: the first call should reach carrier B and get its 503 relayed as 500; got "${first.refusal || first.outcome}"`,
  );
  expect(
    relayed503(second),
    `check 6: the second call got "${second.refusal || second.outcome}"${second.refusal.includes('TOO_MANY') ? ": the first call's reservation was not released by its rollback" : ''}`,
  );
  const after = await settled('deadend');
  expect(after.running === 0, `check 6: deadend still has ${after.running} running entries`);

  // The caller gives up while carrier C rings (ringer: limit 1, carrier C only).
  const cancelled = await call(lab, 'cancel-1', 'ringer', { scenario: 'uac_cancel.xml', holdMs: 300 });
  const again = await call(lab, 'cancel-2', 'ringer', { scenario: 'uac_cancel.xml', holdMs: 300 });
  log(`  ringer (limit 1, carrier C rings): first call "${cancelled.refusal}", second call "${again.refusal}"`);
  const seenC = invitesSeen(lab.uasC);
  const cancelledWhileRinging = (c: CallResult) => c.outcome === 'refused' && c.refusal.startsWith('487') && seenC.has(c.callId);
  expect(
    cancelledWhileRinging(cancelled),
    `check 6: the first call should ring at carrier C and end 487 on CANCEL; got "${cancelled.refusal || cancelled.outcome}"`,
  );
  expect(
    cancelledWhileRinging(again),
    `check 6: the call after a cancelled one got "${again.refusal || again.outcome}"${again.refusal.includes('TOO_MANY') ? ": the cancelled call's reservation was not released by its rollback" : ''}`,
  );
  const ringer = await settled('ringer');
  expect(ringer.running === 0, `check 6: ringer still has ${ringer.running} running entries`);
  const left = await records([first.callId, second.callId, cancelled.callId, again.callId]);
  expect(left.length === 0, `check 6: failed calls left ${left.length} transaction records`);
}

/** The built CLI, `rating import`, beside the lab's service (its DATA_DIR: docs/IMPORTS.md, "CLI"). */
async function ratingImport(
  lab: Lab,
  name: string,
  args: string[],
): Promise<{ code: number | null; summary: Record<string, string>; output: string }> {
  const logFile = path.join(lab.dir, `${name}.log`);
  // The service's DATA_DIR, where it records its servers (servers.json); nothing that would point elsewhere.
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: path.join(lab.dir, 'data') };
  for (const name of Object.keys(env)) if (/^(MONGO_|REDIS_|QUEUE_PREFIX)/.test(name)) delete env[name];
  const s = startProcess(
    name,
    process.execPath,
    [path.join(ROOT, 'dist', 'cli', 'rating.js'), 'import', ...args, '--no-progress'],
    logFile,
    env,
  );
  const code = await s.exited;
  const output = tail(logFile, 40);
  const summary: Record<string, string> = {};
  for (const line of output.split('\n')) {
    const m = /^([a-z ]+):\s+(.*)$/.exec(line);
    if (m) summary[m[1]] = m[2];
  }
  return { code, summary, output };
}

interface Stamps {
  callId: string;
  begin: string;
  end: string;
  account: string;
  destination: string;
  carrier: string;
}

/** The stamps the real-time config would have sent for each call, as the CDR Kamailio logged them (WITH_RATING_STAMPS). */
function rateStamps(logFile: string): Map<string, Stamps> {
  const text = readFileSync(logFile, 'utf8');
  const calls = new Map<string, Stamps>();
  for (const m of text.matchAll(/rating-stamp begin (\S+) (\d+\.\d+) (\S+) (\S+) (\S+)/g))
    calls.set(m[1], { callId: m[1], begin: m[2], end: '', account: m[3], destination: m[4], carrier: m[5] });
  for (const m of text.matchAll(/rating-stamp end (\S+) (\d+\.\d+)/g)) {
    const c = calls.get(m[1]);
    if (c) c.end = m[2];
  }
  return calls;
}

/**
 * 9. A caller sends a charged call's Call-ID again, and that attempt fails (every carrier refuses it):
 * the config's rollback of the failed attempt must not take back the charged call. The config tags each
 * INVITE with its Call-ID and the moment it arrived (docs/SIP.md, "The transaction tag"); with the
 * Call-ID alone as the tag, that rollback refunded and deleted the first call's record.
 */
async function checkReplayedCallId(lab: Lab): Promise<void> {
  const callId = `lab-replay-${process.pid}@${HOST}`;
  const first = await call(lab, 'replay-1', 'replayer', { holdMs: 1300, callId });
  expect(first.outcome === 'answered', `check 9: the first call of replayer was not answered: ${first.refusal}`);
  const charged = (await recordsOf([callId])).get(callId)!;
  const before = await settled('replayer', 100000n - BigInt(charged.fee));
  expect(BigInt(charged.fee) > 0n, `check 9: the first call was not charged (fee ${charged.fee})`);
  // The same caller, its calls now sent to carrier B only, which answers every INVITE 503.
  await gql(`mutation { updateAccount(account_tag: "replayer", carrier_tags_override: ["carrier-b"]) { id } }`);
  const again = await call(lab, 'replay-2', 'replayer', { callId });
  log(`  first call charged ${charged.fee}; the same Call-ID again: "${again.refusal || again.outcome}"`);
  expect(
    again.outcome === 'refused' && invitesSeen(lab.uasB).has(callId),
    `check 9: the second attempt should reach carrier B and fail; got "${again.refusal || again.outcome}"`,
  );
  const after = await settled('replayer');
  const left = await records([callId]);
  expect(
    left.length === 1 && left[0].fee === charged.fee && left[0].transaction_tag === charged.transaction_tag,
    `check 9: the charged call's record after the failed attempt with its Call-ID: ${JSON.stringify(left)}`,
  );
  expect(
    after.balance === before.balance,
    `check 9: the balance went from ${before.balance} to ${after.balance}: the failed attempt took the charged call back`,
  );
  expect(after.running === 0, `check 9: replayer still has ${after.running} running entries`);
}

/**
 * 8. A switch not asked to rate: Kamailio's own acc module writes the calls into db_flatstore files, the
 * files are imported, and each call is charged exactly what the real-time path charges for it.
 */
async function checkCdrFiles(lab: Lab): Promise<void> {
  const variants = [
    { name: 'acc', define: 'WITH_ACC_TRANSACTIONS', caller: 'cdr-acc', files: /^acc_\d+\.log$/, args: ['--map', ACC_MAP] },
    { name: 'acc_cdrs', define: 'WITH_DIALOG_CDRS', caller: 'cdr-dlg', files: /^acc_cdrs_\d+\.log$/, args: ['--format', 'kamailio-cdrs'] },
  ];
  const holds = [1300, 2600, 3400];
  for (const v of variants) {
    const port = await freeUdpPort(lab.ports);
    const accDir = path.join(lab.dir, `cdr-${v.name}`);
    const runDir = path.join(lab.dir, `kamailio-cdr-${v.name}`);
    mkdirSync(accDir);
    mkdirSync(runDir);
    const k = startProcess(
      `kamailio-cdr-${v.name}`,
      'kamailio',
      [
        '-f',
        CDR_CONFIG,
        '-DD',
        '-E',
        '-A',
        `LISTEN=udp:${HOST}:${port}`,
        '-A',
        `CARRIER="sip:${HOST}:${lab.carrierA}"`,
        '-A',
        `ACC_DB_URL="flatstore:${accDir}"`,
        '-A',
        v.define,
        '-A',
        'WITH_RATING_STAMPS',
        '-P',
        path.join(runDir, 'kamailio.pid'),
        '-Y',
        runDir,
        '-w',
        runDir,
      ],
      path.join(lab.dir, `kamailio-cdr-${v.name}.log`),
    );
    const until = Date.now() + 20_000;
    while (!(await sipAnswers(port))) {
      if (!running(k)) fail(`check 8: the CDR Kamailio (${v.define}) exited at start:\n${tail(k.log)}`);
      if (Date.now() > until) fail(`check 8: the CDR Kamailio (${v.define}) did not answer SIP within 20 s:\n${tail(k.log)}`);
      await sleep(200);
    }
    const calls: CallResult[] = [];
    for (const [i, holdMs] of holds.entries()) calls.push(await call(lab, `cdr-${v.name}-${i + 1}`, v.caller, { holdMs, proxyPort: port }));
    for (const c of calls) expect(c.outcome === 'answered', `check 8: a call through the CDR Kamailio was not answered: ${c.refusal}`);
    // Stopped before its files are read: db_flatstore flushes every row, but nothing is written after this.
    signalGroup(k, 'SIGTERM');
    await Promise.race([k.exited, sleep(5000)]);
    const tags = calls.map((c) => c.callId);
    const left = await records(tags);
    expect(left.length === 0, `check 8: the agent was asked about calls of the CDR Kamailio (${left.length} records before the import)`);

    // The real-time path for the same calls, on a twin account: begin and end with the proxy's stamps.
    const stamps = rateStamps(k.log);
    for (const tag of tags) {
      const st = stamps.get(tag);
      if (!st || !st.end) fail(`check 8: the CDR Kamailio logged no begin and end stamps for ${tag}`);
      const twin = `twin-${st.account}`;
      const begin = await post(`${service!.agentUrl}/v1/begin_transaction`, {
        transaction_tag: tag,
        account_tag: twin,
        source: st.account,
        destination: st.destination,
        carrier_ip: st.carrier,
        timestamp_begin: st.begin,
      });
      const end = await post(`${service!.agentUrl}/v1/end_transaction`, { transaction_tag: tag, account_tag: twin, timestamp_end: st.end });
      expect(
        (begin.json as { ok?: boolean })?.ok === true && (end.json as { ok?: boolean })?.ok === true,
        `check 8: the real-time begin/end of ${tag} for ${twin} failed: ${begin.text} ${end.text}`,
      );
    }

    // The switch's files: one per table and process; a call's rows may be in two of them.
    const files = readdirSync(accDir).filter((f) => v.files.test(f));
    expect(files.length > 0, `check 8: Kamailio wrote no ${v.name} files in ${accDir} (${readdirSync(accDir).join(', ')})`);
    const joined = path.join(lab.dir, `${v.name}.log`);
    writeFileSync(joined, files.map((f) => readFileSync(path.join(accDir, f), 'utf8')).join(''));
    const imported = await ratingImport(lab, `import-${v.name}`, [joined, ...v.args]);
    expect(imported.code === 0, `check 8: rating import of ${v.name} exited ${imported.code}:\n${imported.output}`);
    expect(
      imported.summary.rated === String(calls.length) && imported.summary.rejected?.startsWith('0 '),
      `check 8: rating import of ${v.name}: rated ${imported.summary.rated}, rejected ${imported.summary.rejected} for ${calls.length} calls:\n${imported.output}`,
    );

    const twin = await settled(`twin-${v.caller}`);
    const all = await records(tags);
    const before = await account(v.caller);
    for (const tag of tags) {
      const fromFile = all.find((r) => r.transaction_tag === tag && r.account_tag === v.caller);
      const realTime = all.find((r) => r.transaction_tag === tag && r.account_tag === `twin-${v.caller}`);
      if (!fromFile || !realTime)
        fail(`check 8: ${tag}: imported record ${fromFile ? 'found' : 'missing'}, real-time record ${realTime ? 'found' : 'missing'}`);
      const fileMs = Date.parse(fromFile.timestamp_end) - Date.parse(fromFile.timestamp_begin);
      const liveMs = Date.parse(realTime.timestamp_end) - Date.parse(realTime.timestamp_begin);
      log(
        `  ${v.name}: ${tag}: file ${seconds(fileMs)} s, billed ${fromFile.duration} s, fee ${fromFile.fee}; real time ${seconds(liveMs)} s, billed ${realTime.duration} s, fee ${realTime.fee}`,
      );
      expect(
        fromFile.duration === realTime.duration && fromFile.fee === realTime.fee,
        `check 8: ${tag} imported from ${v.name} was billed ${fromFile.duration} s, fee ${fromFile.fee}; the real-time path billed ${realTime.duration} s, fee ${realTime.fee}`,
      );
    }
    expect(
      100000n - before.balance === 100000n - twin.balance,
      `check 8: ${v.caller} paid ${100000n - before.balance} for its imported calls, its twin ${100000n - twin.balance} through the real-time path`,
    );
    // The same file again: every call a duplicate, nothing charged.
    const again = await ratingImport(lab, `import-${v.name}-again`, [joined, ...v.args]);
    expect(
      again.code === 0 && again.summary.rated === '0' && again.summary.charged === '0',
      `check 8: importing ${v.name} again rated ${again.summary.rated}, charged ${again.summary.charged}`,
    );
    expect((await account(v.caller)).balance === before.balance, `check 8: importing ${v.name} again changed ${v.caller}'s balance`);
  }
}

// ============================================================================ main

async function startLab(dir: string): Promise<Lab> {
  const ports = new Set<number>();
  const carrierA = await freeUdpPort(ports);
  const carrierB = await freeUdpPort(ports);
  const carrierC = await freeUdpPort(ports);
  const kamailioPort = await freeUdpPort(ports);
  const uriKamailioPort = await freeUdpPort(ports);

  token = randomBytes(24).toString('hex');
  // END_CALL (check 11): the service's webhook goes to the first Kamailio, which ends the calls it names.
  const webhookPort = await testPort(HOST);
  const webhookSecret = randomBytes(24).toString('hex');
  service = new ServiceProcess();
  const t0 = Date.now();
  await service.start({
    dir,
    logName: 'service',
    env: {
      RATING_TOKENS: `sip-lab:read+write+agent:${token}`,
      ALERT_WEBHOOK_URL: `http://${HOST}:${webhookPort}/rating-events`,
      ALERT_WEBHOOK_SECRET: webhookSecret,
      END_CALL_SCAN_SECONDS: '1',
    },
  });
  log(`service up in ${seconds(Date.now() - t0)} s (api ${service.apiUrl}, agent ${service.agentUrl})`);

  const uas = (name: string, scenario: string, port: number) =>
    startProcess(
      name,
      'sipp',
      [
        '-sf',
        path.join(SCENARIOS, scenario),
        '-i',
        HOST,
        '-p',
        String(port),
        '-trace_logs',
        '-log_file',
        path.join(dir, `${name}.actions.log`),
        '-trace_err',
        '-error_file',
        path.join(dir, `${name}.errors.log`),
        '-nostdin',
      ],
      path.join(dir, `${name}.log`),
    );
  const uasA = uas('carrier-a', 'uas.xml', carrierA);
  const uasB = uas('carrier-b', 'uas_503.xml', carrierB);
  const uasC = uas('carrier-c', 'uas_ring.xml', carrierC);

  // Kamailio in the foreground (-DD: no daemon, workers forked; -E: log to stderr), its pid file and
  // runtime files in its own directory: no system service, nothing under /var/run.
  const kamailioAt = (name: string, port: number, defines: string[]) => {
    const runDir = path.join(dir, name);
    mkdirSync(runDir);
    return startProcess(
      name,
      'kamailio',
      [
        '-f',
        config,
        '-DD',
        '-E',
        '-A',
        `LISTEN=udp:${HOST}:${port}`,
        '-A',
        `AGENT_URL="${service!.agentUrl}"`,
        '-A',
        `AGENT_TOKEN="${token}"`,
        ...defines.flatMap((d) => ['-A', d]),
        '-P',
        path.join(runDir, 'kamailio.pid'),
        '-Y',
        runDir,
        '-w',
        runDir,
      ],
      path.join(dir, `${name}.log`),
    );
  };
  const kamailio = kamailioAt('kamailio', kamailioPort, [`WEBHOOK_SECRET="${webhookSecret}"`, `WEBHOOK_LISTEN=tcp:${HOST}:${webhookPort}`]);
  const uriKamailio = kamailioAt('kamailio-uri', uriKamailioPort, ['DESTINATION_AS_URI']);

  const lab: Lab = {
    dir,
    kamailioPort,
    uriKamailioPort,
    carrierA,
    carrierB,
    carrierC,
    uasA,
    uasB,
    uasC,
    kamailio,
    uriKamailio,
    ports,
    calls: 0,
  };
  const until = Date.now() + 20_000;
  for (const [name, s, port] of [
    ['Kamailio', kamailio, kamailioPort],
    ['Kamailio (DESTINATION_AS_URI)', uriKamailio, uriKamailioPort],
    ['carrier A', uasA, carrierA],
    ['carrier B', uasB, carrierB],
    ['carrier C', uasC, carrierC],
  ] as const) {
    for (;;) {
      if (!running(s)) fail(`${name} exited at start (code ${s.child.exitCode}):\n${tail(s.log)}`);
      if (!name.startsWith('Kamailio') || (await sipAnswers(port))) break;
      if (Date.now() > until) fail(`${name} did not answer SIP on ${HOST}:${port} within 20 s:\n${tail(s.log)}`);
      await sleep(200);
    }
  }
  // SIPp binds its port before it reads its scenario's first message: give the UAS a moment.
  await sleep(300);
  for (const [name, s] of [
    ['carrier A', uasA],
    ['carrier B', uasB],
    ['carrier C', uasC],
  ] as const)
    if (!running(s)) fail(`${name} (SIPp UAS) exited at start:\n${tail(s.log)}`);
  await seed(lab);
  log(
    `Kamailio on udp:${HOST}:${kamailioPort} (and with DESTINATION_AS_URI on ${uriKamailioPort}), carrier A (answers) on ${carrierA}, carrier B (503) on ${carrierB}, carrier C (rings) on ${carrierC}; seeded`,
  );
  return lab;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const keep = args.includes('--keep');
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--keep') continue;
    if (args[i] === '--config' && args[i + 1]) config = path.resolve(args[++i]);
    else {
      process.stderr.write(`unknown option ${args[i]}\nusage: npm run test:sip -- [--keep] [--config FILE]\n`);
      process.exit(2);
    }
  }
  if (!existsSync(config)) {
    process.stderr.write(`no such config: ${config}\n`);
    process.exit(2);
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rating-sip-lab-'));
  let lab: Lab | undefined;
  let cleaning: Promise<void> | undefined;
  const cleanup = (removeDir: boolean) =>
    (cleaning ??= (async () => {
      await stopAll().catch(() => undefined);
      await service?.stop().catch(() => undefined);
      if (removeDir && !keep) rmSync(dir, { recursive: true, force: true });
      else log(`logs kept in ${dir}`);
    })());
  const showTails = () => {
    for (const s of started.filter((x) => !x.name.startsWith('sipp caller'))) {
      process.stderr.write(`\n--- ${s.name}: ${s.log} (tail)\n${tail(s.log, 40)}\n`);
      const actions = s.log.replace(/\.log$/, '.actions.log');
      if (existsSync(actions)) process.stderr.write(`--- ${actions} (tail)\n${tail(actions, 20)}\n`);
    }
    process.stderr.write(`\n--- service: ${path.join(dir, 'service.log')} (tail)\n${tail(path.join(dir, 'service.log'), 20)}\n`);
  };
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      interrupted = true;
      process.stderr.write(`\n${signal}: stopping every process the lab started\n`);
      void cleanup(false).finally(() => process.exit(130));
    });
  }
  let watchdog: NodeJS.Timeout | undefined;

  let code = 0;
  const t0 = Date.now();
  try {
    try {
      ensurePackages(PACKAGES, ['kamailio', 'sipp'], log);
    } catch (err) {
      fail((err as Error).message);
    }
    watchdog = setTimeout(() => {
      process.stderr.write(`sip lab: FAILED: still running after ${WATCHDOG_MS / 60_000} min; stopping\n`);
      showTails();
      void cleanup(false).finally(() => process.exit(2));
    }, WATCHDOG_MS);
    const kamailioVersion = versionOf('kamailio', ['-v'], /kamailio (\d+\.\d+\.\d+)/);
    const sippVersion = versionOf('sipp', ['-v'], /SIPp v(\d+\.\d+(?:\.\d+)?)/);
    log(`sip lab: Kamailio ${kamailioVersion}, SIPp ${sippVersion}; ${path.relative(ROOT, config)}; temp dir ${dir}`);
    lab = await startLab(dir);
    const checks: Array<[string, (lab: Lab) => Promise<void>]> = [
      ['1. completed calls are charged for their real duration (number and URI form)', checkCompleted],
      ['2. a call cut at max_available_units leaves the balance >= 0', checkCut],
      ['3. unknown and inactive accounts get 403 before routing', checkRefusedBeforeRouting],
      ['4. 5 simultaneous calls on an account limited to 2: 3 refused before routing, never more than 2 running', checkConcurrency],
      ['5. a 503 from the first carrier fails over to the second, charged', checkFailover],
      ['6. a call refused by every carrier or cancelled after authorization releases its reservation', checkRollback],
      ['7. a 503 from the cheapest carrier fails over to a dearer one, cut at the grant: the balance stays >= 0', checkFailoverCut],
      ["8. a switch not asked to rate: Kamailio's acc files imported, each call charged as in real time", checkCdrFiles],
      ["9. a caller re-sending a charged call's Call-ID, that attempt failing, cannot take the charged call back", checkReplayedCallId],
      ['10. a caller holding its ACK back 3 s is cut at its grant counted from the 200 OK: the balance stays >= 0', checkLateAck],
      ["11. two calls sharing a prepaid balance are ended by the engine's END_CALL webhook as it runs out", checkEndCall],
    ];
    for (const [name, check] of checks) {
      const t = Date.now();
      log(`check ${name}`);
      await check(lab);
      log(`  ok (${seconds(Date.now() - t)} s)`);
    }
    for (const k of [lab.kamailio, lab.uriKamailio, lab.uasA, lab.uasB, lab.uasC])
      if (!running(k)) fail(`${k.name} exited during the run:\n${tail(k.log)}`);
    log(`all checks passed in ${seconds(Date.now() - t0)} s`);
    clearTimeout(watchdog);
    await cleanup(true);
    log(`sip lab: ${checks.length} checks passed, ${lab.calls} calls (Kamailio ${kamailioVersion}, SIPp ${sippVersion})`);
  } catch (err) {
    code = 1;
    clearTimeout(watchdog);
    // Interrupted: the signal handler is stopping everything and exits 130; what failed since is noise.
    if (interrupted) {
      await cleanup(false);
      return;
    }
    process.stderr.write(
      `\nsip lab: FAILED: ${err instanceof LabFailure ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    showTails();
    await cleanup(false);
  }
  process.exit(code);
}

void main();
