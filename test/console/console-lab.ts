/**
 * test:console (issue 14, part 4): the operator console in a real browser. Debian's Chromium, driven by
 * playwright-core (no browser download), against the service as `npm start` runs it (API with the built
 * console at /console, agent, workers, local Redis and MongoDB-wire server, fresh data):
 *
 *   1. a read-only token logs in and sees no create, edit or top-up buttons;
 *   2. an operator token logs in and creates a carrier, a pricelist, a rate and an account through the forms;
 *   3. a call placed through the agent (authorization, begin, end over /v1) shows in the transactions list,
 *      and the account's page shows the balance less the call's fee;
 *   4. a top-up through the account page's dialog moves the balance by exactly its amount;
 *   5. a rate deck uploaded on the rate decks page reports its added, changed and rejected prefixes, and the
 *      rates list shows the new prefixes;
 *   6. a CDR file uploaded on the imports page is imported: its calls charged at the price of their time
 *      (before the deck), its bad line listed with the reason;
 *   7. the dashboard shows the worker count, and its figures count the calls and their revenue;
 *   8. holidays created on the holidays page are listed by date, one is deleted from its edit page, and a
 *      pricelist's time zone is set on its edit page (an unknown zone is refused with the API's message);
 *   9. a timed rate (peak, Mon-Fri 18:00-22:00) is created through the rate form (a start without an end is
 *      refused with the API's message first), saved again from its edit page, and the rates list shows its
 *      timing;
 *  10. a call recorded through the agent across the peak's start, on the pricelist's clock, is charged
 *      60 + 600, and its record's page shows the two segments;
 *  11. an account's hourly spend limit is set through its form (the other two left empty stay "no limit"),
 *      its page shows it, and so does the list's optional column;
 *  12. the peak rate's price is changed through the rate form, and a rerating's dry run on the Reratings
 *      page over the peak week's calls (two accounts) counts what would change, per account;
 *  13. the rerating is started, its page follows it until done with the expected counts, and the accounts
 *      are charged the difference;
 *  14. a rerated call's page shows its corrected fee and its rerating history (before, after, the run);
 *  15. a read-only token sees the run, gets the dry run (nothing left to change) and no Start button, and
 *      no edit of an account's limits.
 *
 *   npm run test:console -- [--keep] [--headed]
 *     --keep    leave the temp dir (service log, screenshots) in place
 *
 * Installs `chromium` with apt-get when missing. Screenshots of every step go to test-artifacts/console/.
 * Last line: `console lab: <n> checks passed (Chromium <version>)`. Any failure exits non-zero with the
 * reason, a screenshot of the page and the tail of the service's log.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { sleep } from '../../src/shared/infra/services/process-tools';
import { ensurePackages, versionOf } from '../support/apt';
import { postJson } from '../support/http-json';
import { ServiceProcess } from '../support/service-process';

const ROOT = path.resolve(__dirname, '..', '..');
const ARTIFACTS = path.join(ROOT, 'test-artifacts', 'console');
const CHROMIUM = '/usr/bin/chromium';
/** The whole run once Chromium is installed: far above a normal run. */
const WATCHDOG_MS = 5 * 60_000;
/** How long a page may take to show what a step waits for (the service runs on the same 2 cores). */
const UI_TIMEOUT_MS = 20_000;

const SECRETS = {
  ops: `ops-${'o'.repeat(24)}`,
  viewer: `viewer-${'v'.repeat(24)}`,
  agent: `switch-${'s'.repeat(24)}`,
};

class LabFailure extends Error {}

function fail(message: string): never {
  throw new LabFailure(message);
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

let checks = 0;
function passed(what: string): void {
  checks += 1;
  log(`ok ${checks} - ${what}`);
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

// ============================================================================ the service

let service: ServiceProcess | undefined;

async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const a = await postJson(`${service!.apiUrl}/graphql`, { query, variables }, { token: SECRETS.ops });
  const body = a.json as { data?: T; errors?: unknown[] } | undefined;
  if (a.status !== 200 || body?.errors?.length) fail(`management API request failed (${a.status}): ${a.text.slice(0, 500)}`);
  return body!.data!;
}

async function agent(operation: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const a = await postJson(`${service!.agentUrl}/v1/${operation}`, body, { token: SECRETS.agent });
  if (a.status !== 200) fail(`agent ${operation} answered ${a.status}: ${a.text.slice(0, 300)}`);
  return a.json as Record<string, unknown>;
}

async function balanceOf(tag: string): Promise<bigint> {
  const data = await gql<{ Account: { balance: string } | null }>('query ($tag: String) { Account(account_tag: $tag) { balance } }', {
    tag,
  });
  if (!data.Account) fail(`account ${tag} is missing`);
  return BigInt(data.Account.balance);
}

/** Polls the management API until `check` holds (processing runs in the workers after end answers). */
async function eventually<T>(what: string, read: () => Promise<T>, check: (value: T) => boolean, withinMs = 20_000): Promise<T> {
  const until = Date.now() + withinMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > until) fail(`${what}: still ${JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`);
    await sleep(250);
  }
}

// ============================================================================ the steps

/** The call the lab places: 30 s to prefix 39 at 60 per minute, so a fee of exactly 30. */
const CALL = { account: 'lab-customer', destination: '39061234567', seconds: 30, rate: 60, fee: 30n };
const OPENING_BALANCE = 1000n;
const TOP_UP = 250n;

/** Minor units as the console shows them (digit groups). */
const shown = (amount: bigint): string => amount.toLocaleString('en-US');

async function newPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await context.newPage();
  page.setDefaultTimeout(UI_TIMEOUT_MS);
  return page;
}

async function login(page: Page, secret: string): Promise<void> {
  await page.goto(`${service!.apiUrl}/console/`);
  // By its id, not its label: a CI run (2026-11-27) timed out finding the field by its label on the third
  // login of the lab while the page showed it (test-artifacts/console/failure.png); the id does not go
  // through the accessibility tree.
  await page.locator('#api-token').fill(secret);
  await page.getByRole('button', { name: /sign in/i }).click();
  await page.getByRole('heading', { name: 'Dashboard' }).or(page.getByTestId('running-calls')).first().waitFor();
}

/** Opens a menu entry of the console's sidebar. */
async function openMenu(page: Page, label: string): Promise<void> {
  await page
    .getByRole('menuitem', { name: label })
    .or(page.getByRole('link', { name: label, exact: true }))
    .first()
    .click();
}

async function save(page: Page): Promise<void> {
  const form = page.url();
  await page.getByRole('button', { name: 'Save' }).click();
  await page
    .getByText(/Element created|Element updated/)
    .first()
    .waitFor();
  // Every form of the console redirects after saving (to the record's page or the list). The notice can
  // show before that navigation: a CI run (2026-11-27) opened the next menu entry in between, and the
  // redirect then took the page back to the saved rate, where the lab waited for a "Create" link in vain.
  await page.waitForURL((url) => url.href !== form);
}

/** An autocomplete reference input (pricelist, carrier): type the tag, pick the option. */
async function pick(page: Page, label: string, value: string): Promise<void> {
  const input = page.getByLabel(label, { exact: false }).first();
  await input.click();
  await input.fill(value);
  // Options read "<tag>" or "<tag> (<name>)".
  await page.getByRole('option', { name: new RegExp(`^${value}( \\(|$)`) }).click();
}

/** A native select (the rate deck page's pricelist and carrier), by the option's value. */
async function choose(page: Page, label: string, value: string): Promise<void> {
  await page.getByRole('combobox', { name: label }).selectOption(value);
}

/** A react-admin array-of-text input: type a value and press Enter to add it. */
async function addTag(page: Page, label: string, value: string): Promise<void> {
  const input = page.getByLabel(label, { exact: false }).first();
  await input.fill(value);
  await input.press('Enter');
}

async function readOnlySeesNoEditing(browser: Browser): Promise<void> {
  const page = await newPage(browser);
  await login(page, SECRETS.viewer);
  await openMenu(page, 'Accounts');
  await page.getByRole('heading', { name: 'Accounts' }).or(page.getByText('No Account yet')).first().waitFor();
  await shot(page, '01-read-only-accounts');
  const editing = page.getByRole('link', { name: /create/i }).or(page.getByRole('button', { name: /create|top up/i }));
  if ((await editing.count()) > 0) fail('a read-only token sees a create button on the accounts list');
  await openMenu(page, 'Rate decks');
  await page.getByTestId('deck-read-only').waitFor();
  await shot(page, '02-read-only-rate-decks');
  await page.context().close();
  passed('a read-only token logs in and sees no create button and no deck upload');
}

async function createRatingData(page: Page, carrierPort: number): Promise<void> {
  await openMenu(page, 'Carriers');
  await page
    .getByRole('link', { name: /create/i })
    .first()
    .click();
  await page.getByLabel('Carrier tag').fill('lab-carrier');
  await page.getByLabel('Host', { exact: false }).first().fill('127.0.0.1');
  await page.getByLabel('Port', { exact: false }).first().fill(String(carrierPort));
  await page.getByLabel('Protocol', { exact: false }).first().click();
  await page.getByRole('option', { name: 'UDP' }).click();
  await shot(page, '03-carrier-create');
  await save(page);

  await openMenu(page, 'Pricelists');
  await page
    .getByRole('link', { name: /create/i })
    .first()
    .click();
  await page.getByLabel('Pricelist tag').fill('lab-retail');
  await page.getByLabel('Name', { exact: false }).first().fill('Lab retail');
  await page.getByLabel('Currency', { exact: false }).first().click();
  await page.getByRole('option', { name: 'EUR' }).click();
  await save(page);

  await openMenu(page, 'Rates');
  await page
    .getByRole('link', { name: /create/i })
    .first()
    .click();
  await pick(page, 'Pricelist', 'lab-retail');
  await pick(page, 'Carrier', 'lab-carrier');
  await page.getByLabel('Prefix', { exact: false }).first().fill('39');
  await page.getByLabel('Rate', { exact: true }).or(page.getByLabel('Rate *')).first().fill(String(CALL.rate));
  await shot(page, '04-rate-create');
  await save(page);

  await openMenu(page, 'Accounts');
  await page
    .getByRole('link', { name: /create/i })
    .first()
    .click();
  await page.getByLabel('Account tag').fill(CALL.account);
  await page.getByLabel('Opening balance', { exact: false }).fill(String(OPENING_BALANCE));
  await addTag(page, 'Pricelist tags', 'lab-retail');
  await shot(page, '05-account-create');
  await save(page);

  const rate = await gql<{ PricelistRate: { rate: number; carrier_tag: string } | null }>(
    '{ PricelistRate(pricelist_tag: "lab-retail", carrier_tag: "lab-carrier", prefix: "39") { rate carrier_tag } }',
  );
  if (rate.PricelistRate?.rate !== CALL.rate) fail(`the rate created in the console reads back as ${JSON.stringify(rate.PricelistRate)}`);
  if ((await balanceOf(CALL.account)) !== OPENING_BALANCE) fail('the account created in the console has the wrong balance');
  passed('an operator creates a carrier, a pricelist, a rate and an account through the forms');
}

async function placeCall(): Promise<string> {
  const tag = `lab-call-${Date.now()}`;
  const begin = new Date(Date.now() - CALL.seconds * 1000);
  const common = { account_tag: CALL.account, transaction_tag: tag, source: '1001', destination: CALL.destination };
  const auth = await agent('authorization', common);
  if (auth.ok !== true && auth.authorized !== true) fail(`authorization refused the lab call: ${JSON.stringify(auth)}`);
  await agent('begin_transaction', { ...common, timestamp_begin: begin.toISOString() });
  await agent('end_transaction', {
    account_tag: CALL.account,
    transaction_tag: tag,
    timestamp_end: new Date(begin.getTime() + CALL.seconds * 1000).toISOString(),
  });
  await eventually(
    'the lab call is charged',
    () => balanceOf(CALL.account),
    (b) => b === OPENING_BALANCE - CALL.fee,
  );
  return tag;
}

async function callShows(page: Page, tag: string): Promise<void> {
  await openMenu(page, 'Transactions');
  await page.getByText(tag).first().waitFor();
  await shot(page, '06-transactions');
  await openMenu(page, 'Accounts');
  await page.getByText(CALL.account, { exact: true }).first().click();
  await page
    .getByTestId('account-balance')
    .filter({ hasText: shown(OPENING_BALANCE - CALL.fee) })
    .waitFor();
  await shot(page, '07-account-after-call');
  passed(`the call shows in transactions, and the account page shows the balance less its fee (${CALL.fee})`);
}

async function topUp(page: Page): Promise<void> {
  await page.getByRole('button', { name: /top up/i }).click();
  await page.getByLabel('Amount', { exact: false }).fill(String(TOP_UP));
  await page.getByLabel('Reason', { exact: false }).fill('console lab top-up');
  await page.getByRole('button', { name: 'Apply adjustment' }).click();
  const expected = OPENING_BALANCE - CALL.fee + TOP_UP;
  await page
    .getByTestId('account-balance')
    .filter({ hasText: shown(expected) })
    .waitFor();
  await shot(page, '08-account-after-top-up');
  const balance = await balanceOf(CALL.account);
  if (balance !== expected) fail(`after the top-up the balance is ${balance}, expected ${expected}`);
  passed(`a top-up of ${TOP_UP} through the account page moves the balance by exactly that`);
}

async function rateDeck(page: Page, dir: string): Promise<void> {
  const deck = path.join(dir, 'deck.csv');
  // 39 changes price, 44 and 4420 are new, "x1" is rejected.
  writeFileSync(deck, 'prefix,rate,connect_fee,description\n39,48,0,Italy\n44,30,5,UK\n4420,25,5,London\nx1,10,0,bad\n');
  await openMenu(page, 'Rate decks');
  await choose(page, 'Pricelist', 'lab-retail');
  await choose(page, 'Carrier', 'lab-carrier');
  await page.getByTestId('deck-file').locator('input[type=file]').or(page.locator('input[type=file]')).first().setInputFiles(deck);
  await page.getByRole('button', { name: 'Import deck' }).click();
  await page.getByTestId('deck-result').waitFor();
  const counts: Record<string, string> = {};
  for (const name of ['added', 'changed', 'unchanged', 'removed', 'rejected'])
    counts[name] = (await page.getByTestId(`deck-${name}`).innerText()).trim();
  await shot(page, '09-rate-deck');
  const expected = { added: '2', changed: '1', unchanged: '0', removed: '0', rejected: '1' };
  if (JSON.stringify(counts) !== JSON.stringify(expected))
    fail(`the rate deck reported ${JSON.stringify(counts)}, expected ${JSON.stringify(expected)}`);
  await openMenu(page, 'Rates');
  await page.getByTestId('rate-prefix').filter({ hasText: '4420' }).waitFor();
  await shot(page, '10-rates-after-deck');
  passed('a rate deck uploaded in the console reports 2 added, 1 changed, 1 rejected, and the rates list shows the new prefixes');
}

/**
 * Two calls of three hours ago and one for an unknown account, uploaded as a CDR file: the calls began
 * before the deck's effective time, so they keep the old price (60/min: 30 each), and the bad line is
 * listed with its reason.
 */
const IMPORTED = { calls: 2, fee: 30n };

async function cdrImport(page: Page, dir: string): Promise<void> {
  const file = path.join(dir, 'calls.csv');
  const begin = Date.now() - 3 * 3600_000;
  const line = (tag: string, account: string, offset: number) =>
    `${tag},${account},1001,${CALL.destination},${new Date(begin + offset).toISOString()},${new Date(begin + offset + CALL.seconds * 1000).toISOString()}`;
  writeFileSync(
    file,
    [
      'transaction_tag,account_tag,source,destination,timestamp_begin,timestamp_end',
      line('cdr-1', CALL.account, 0),
      line('cdr-2', CALL.account, 60_000),
      line('cdr-3', 'nobody', 0),
    ].join('\n') + '\n',
  );
  const before = await balanceOf(CALL.account);
  await openMenu(page, 'Imports');
  await page
    .getByRole('link', { name: /upload cdr file/i })
    .first()
    .click();
  await page.locator('#import-file').setInputFiles(file);
  await page.getByLabel('Name', { exact: false }).first().fill('lab calls');
  await page.getByRole('button', { name: 'Upload file' }).click();
  await page.getByTestId('import-state').filter({ hasText: 'done' }).first().waitFor();
  const recorded = (await page.getByTestId('import-recorded').innerText()).trim();
  const rejected = (await page.getByTestId('import-rejected').innerText()).trim();
  await page.getByTestId('import-rejects').getByText('nobody').first().waitFor();
  await shot(page, '11-cdr-import');
  if (recorded !== String(IMPORTED.calls) || rejected !== '1')
    fail(`the CDR import shows ${recorded} recorded and ${rejected} rejected, expected ${IMPORTED.calls} and 1`);
  const after = await balanceOf(CALL.account);
  if (before - after !== IMPORTED.fee * BigInt(IMPORTED.calls))
    fail(`the imported calls cost ${before - after}, expected ${IMPORTED.fee * BigInt(IMPORTED.calls)} (the price before the deck)`);
  passed(`a CDR file uploaded in the console is imported: ${IMPORTED.calls} calls charged at the price of their time, the bad line listed`);
}

async function dashboard(page: Page): Promise<void> {
  await openMenu(page, 'Dashboard');
  const workers = page.getByTestId('workers');
  await workers.waitFor();
  await eventually(
    'the dashboard counts the worker processes',
    async () => (await workers.innerText()).trim(),
    (w) => /^[1-9]\d*$/.test(w),
    UI_TIMEOUT_MS,
  );
  await shot(page, '12-dashboard');
  // The charts draw what the dashboard query answers (computed at most every 15 s per API process): that
  // answer counts the calls and their fees. The imported calls ended three hours ago: in the day's
  // revenue, not in the last hour's calls.
  const dayRevenue = CALL.fee + IMPORTED.fee * BigInt(IMPORTED.calls);
  const read = async () => {
    const { dashboard: figures } = await gql<{
      dashboard: { calls_per_minute: Array<{ calls: number }>; revenue_per_hour: Array<{ revenue: string }> };
    }>('{ dashboard { calls_per_minute { calls } revenue_per_hour { revenue } } }');
    return {
      calls: figures.calls_per_minute.reduce((n, b) => n + b.calls, 0),
      revenue: String(figures.revenue_per_hour.reduce((n, b) => n + BigInt(b.revenue), 0n)),
    };
  };
  await eventually('the dashboard figures', read, (f) => f.calls === 1 && f.revenue === String(dayRevenue), 40_000);
  passed(`the dashboard shows the worker count, and its figures count the calls and their revenue (${dayRevenue})`);
}

/**
 * Issue 34 (peak and off-peak rates). Runs last: the peak rate and the time zone it adds to lab-retail
 * would change the prices the checks above expect. The pricelist's clock is Asia/Tokyo (UTC+9, no DST):
 * the peak starts at 09:00Z, so a reading in UTC would find no peak and charge 120.
 */
const TIMED = {
  timeZone: 'Asia/Tokyo',
  peakRate: 600,
  days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri'],
  start: '18:00:00',
  end: '22:00:00',
  summary: 'Mon-Fri 18:00-22:00',
  seconds: 120,
  /** 60 s off-peak at 60/min (the price before the deck) and 60 s at peak. */
  segmentFees: ['60', '600'],
  fee: 660,
};

/** A Monday 17:59:00 in Tokyo (08:59:00Z) one to two weeks ago: before the deck, long before the dashboard's windows. */
function mondayBeforePeak(): Date {
  const weekAgo = new Date(Date.now() - 7 * 86_400_000);
  const sinceMonday = (weekAgo.getUTCDay() + 6) % 7;
  return new Date(Date.UTC(weekAgo.getUTCFullYear(), weekAgo.getUTCMonth(), weekAgo.getUTCDate() - sinceMonday, 8, 59, 0));
}

async function createHoliday(page: Page, date: string, name: string): Promise<void> {
  await openMenu(page, 'Holidays');
  await page
    .getByRole('link', { name: /create/i })
    .first()
    .click();
  // By the inputs' names: while the list is still shown, its "Sort by date" button is labelled Date too.
  await page.locator('input[name="date"]').fill(date);
  await page.locator('input[name="name"]').fill(name);
  await save(page);
  await page.getByTestId('holiday-date').filter({ hasText: date }).waitFor();
}

async function holidayAndTimeZone(page: Page): Promise<void> {
  const year = new Date().getUTCFullYear() + 1;
  const date = `${year}-12-25`;
  const earlier = `${year}-01-01`;
  await createHoliday(page, date, 'Christmas');
  await createHoliday(page, earlier, 'New Year');
  const dates = (await page.getByTestId('holiday-date').allInnerTexts()).map((t) => t.trim());
  if (JSON.stringify(dates) !== JSON.stringify([earlier, date])) fail(`the holidays list shows ${JSON.stringify(dates)}, by date`);
  await shot(page, '13-holidays');
  // A holiday opens on its edit page, which deletes it (after a confirmation).
  await page.getByTestId('holiday-date').filter({ hasText: earlier }).click();
  await page.getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('button', { name: 'Confirm' }).click();
  await page.getByText('Element deleted').first().waitFor();
  await page.getByTestId('holiday-date').filter({ hasText: earlier }).waitFor({ state: 'detached' });

  await openMenu(page, 'Pricelists');
  await page.getByText('lab-retail', { exact: true }).first().click();
  await page.getByRole('link', { name: 'Edit' }).click();
  const zone = page.getByLabel('Time zone', { exact: false }).first();
  await zone.fill('Mars/Olympus');
  await page.getByRole('button', { name: 'Save' }).click();
  await page
    .getByText(/time_zone: must be an IANA time zone/)
    .first()
    .waitFor();
  await shot(page, '14-pricelist-time-zone-refused');
  await zone.fill(TIMED.timeZone);
  await save(page);
  await page.getByTestId('pricelist-time-zone').filter({ hasText: TIMED.timeZone }).first().waitFor();
  await shot(page, '15-pricelist-time-zone');

  const data = await gql<{ Holiday: { name: string } | null; Pricelist: { time_zone: string | null } | null }>(
    'query ($date: String) { Holiday(date: $date) { name } Pricelist(pricelist_tag: "lab-retail") { time_zone } }',
    { date },
  );
  if (data.Holiday?.name !== 'Christmas') fail(`the holiday created in the console reads back as ${JSON.stringify(data.Holiday)}`);
  if (data.Pricelist?.time_zone !== TIMED.timeZone) fail(`the pricelist's time zone reads back as ${JSON.stringify(data.Pricelist)}`);
  const { _allHolidaysMeta: count } = await gql<{ _allHolidaysMeta: { count: number } }>('{ _allHolidaysMeta { count } }');
  if (count.count !== 1) fail(`${count.count} holidays after one of two was deleted`);
  passed(
    `holidays are created, listed by date and deleted, and lab-retail's time zone is set to ${TIMED.timeZone} (an unknown zone refused)`,
  );
}

async function timedRate(page: Page): Promise<void> {
  await openMenu(page, 'Rates');
  await page
    .getByRole('link', { name: /create/i })
    .first()
    .click();
  await pick(page, 'Pricelist', 'lab-retail');
  await pick(page, 'Carrier', 'lab-carrier');
  await page.getByLabel('Prefix', { exact: false }).first().fill('39');
  await page.getByLabel('Rate', { exact: true }).or(page.getByLabel('Rate *')).first().fill(String(TIMED.peakRate));
  await page.getByLabel('Description', { exact: false }).first().fill('lab peak');
  for (const day of TIMED.days) await page.getByRole('checkbox', { name: day, exact: true }).check();
  await page.getByLabel('Start', { exact: true }).fill(TIMED.start);
  // The API refuses a start without an end: the form shows its message and stays open.
  await page.getByRole('button', { name: 'Save' }).click();
  await page
    .getByText(/timing\.start and end: give both/)
    .first()
    .waitFor();
  await shot(page, '16-timed-rate-refused');
  await page.getByLabel('End', { exact: true }).fill(TIMED.end);
  await shot(page, '17-timed-rate-create');
  await save(page);
  await page.getByTestId('rate-timing').filter({ hasText: TIMED.summary }).first().waitFor();
  // Saved again from its edit page, the timing the form loaded goes back as the API takes it.
  await page.getByRole('link', { name: 'Edit' }).click();
  await page.getByLabel('Description', { exact: false }).first().fill('lab peak hours');
  await save(page);
  await page.getByTestId('rate-description').filter({ hasText: 'lab peak hours' }).waitFor();
  await page.getByTestId('rate-timing').filter({ hasText: TIMED.summary }).first().waitFor();

  await openMenu(page, 'Rates');
  await page.getByTestId('rate-timing').filter({ hasText: TIMED.summary }).first().waitFor();
  await shot(page, '18-rates-with-timing');
  const { allPricelistRates: rates } = await gql<{ allPricelistRates: Array<{ rate: number; timing: unknown }> }>(
    '{ allPricelistRates(filter: { pricelist_tag: "lab-retail", prefix: "39" }) { rate timing { days start end holidays } } }',
  );
  const peak = rates.find((r) => r.rate === TIMED.peakRate);
  const expected = { days: [1, 2, 3, 4, 5], start: TIMED.start, end: TIMED.end, holidays: null };
  if (JSON.stringify(peak?.timing) !== JSON.stringify(expected)) fail(`the timed rate reads back as ${JSON.stringify(rates)}`);
  passed(
    `a timed rate (${TIMED.summary}, ${TIMED.peakRate}/min) is created and edited through the form, and the rates list shows its timing`,
  );
}

async function segmentedRecord(page: Page): Promise<void> {
  const tag = `lab-peak-${Date.now()}`;
  const begin = mondayBeforePeak();
  const answer = await agent('record_transaction', {
    account_tag: CALL.account,
    transaction_tag: tag,
    source: '1001',
    destination: CALL.destination,
    timestamp_begin: begin.toISOString(),
    timestamp_end: new Date(begin.getTime() + TIMED.seconds * 1000).toISOString(),
  });
  if (answer.ok !== true) fail(`recordTransaction refused the peak call: ${JSON.stringify(answer)}`);
  const read = async () =>
    (
      await gql<{ Transaction: { fee: number | string; segments: Array<{ fee: number | string }> | null } | null }>(
        'query ($tag: String) { Transaction(account_tag: "lab-customer", transaction_tag: $tag) { fee segments { fee } } }',
        { tag },
      )
    ).Transaction;
  const record = await eventually('the peak call is recorded', read, (r) => r !== null);
  const fees = (record?.segments ?? []).map((s) => String(s.fee));
  if (String(record?.fee) !== String(TIMED.fee) || JSON.stringify(fees) !== JSON.stringify(TIMED.segmentFees))
    fail(`the call from ${begin.toISOString()} is recorded as ${JSON.stringify(record)}, expected fee ${TIMED.fee} in segments ${fees}`);

  await openMenu(page, 'Transactions');
  await page.getByText(tag).first().click();
  await page.getByTestId('transaction-segments').waitFor();
  const shownFees = (await page.getByTestId('segment-fee').allInnerTexts()).map((t) => t.trim());
  const timings = (await page.getByTestId('segment-timing').allInnerTexts()).map((t) => t.trim());
  const fee = (await page.getByTestId('transaction-fee').first().innerText()).trim();
  await shot(page, '19-record-segments');
  if (JSON.stringify(shownFees) !== JSON.stringify(TIMED.segmentFees) || fee !== String(TIMED.fee) || timings[1] !== TIMED.summary)
    fail(`the record's page shows fee ${fee}, segment fees ${JSON.stringify(shownFees)}, timings ${JSON.stringify(timings)}`);
  passed(
    `a call recorded across the peak's start (${begin.toISOString()}, Tokyo 17:59) costs ${TIMED.fee}, and its page shows the two segments`,
  );
}

/**
 * Issue 34: spend limits in the account form. The limit is set on lab-customer, far above what the checks
 * after it charge it (calls recorded are never refused by a limit, only authorized ones).
 */
const HOURLY_LIMIT = 50_000n;

async function spendLimit(page: Page): Promise<void> {
  await openMenu(page, 'Accounts');
  await page.getByText(CALL.account, { exact: true }).first().click();
  await page.getByTestId('account-spend-limits').waitFor();
  await page.getByRole('link', { name: 'Edit' }).click();
  const hourly = page.getByLabel('Hourly spend limit', { exact: false }).first();
  await hourly.fill('-5');
  await page.getByRole('button', { name: 'Save' }).click();
  await page
    .getByText(/Must be a whole, non-negative number/)
    .first()
    .waitFor();
  await hourly.fill(String(HOURLY_LIMIT));
  await shot(page, '20-account-spend-limit-edit');
  await save(page);
  await page
    .getByTestId('account-hourly-spend-limit')
    .filter({ hasText: shown(HOURLY_LIMIT) })
    .waitFor();
  const others = [
    (await page.getByTestId('account-max-call-cost').innerText()).trim(),
    (await page.getByTestId('account-daily-spend-limit').innerText()).trim(),
  ];
  await shot(page, '21-account-spend-limit');
  if (JSON.stringify(others) !== JSON.stringify(['no limit', 'no limit'])) fail(`the account page shows the other limits as ${others}`);
  const { Account: limits } = await gql<{ Account: Record<string, unknown> | null }>(
    'query ($tag: String) { Account(account_tag: $tag) { max_call_cost hourly_spend_limit daily_spend_limit } }',
    { tag: CALL.account },
  );
  const expected = { max_call_cost: null, hourly_spend_limit: Number(HOURLY_LIMIT), daily_spend_limit: null };
  if (JSON.stringify(limits) !== JSON.stringify(expected)) fail(`the limits read back as ${JSON.stringify(limits)}`);
  // The list's optional column, picked with "Columns".
  await openMenu(page, 'Accounts');
  await page.getByRole('button', { name: 'Columns' }).click();
  await page.getByLabel('Hourly spend limit', { exact: true }).check();
  await page.keyboard.press('Escape');
  await page.getByPlaceholder('Search columns').waitFor({ state: 'hidden' });
  await page.getByRole('columnheader', { name: 'Hourly spend limit' }).waitFor();
  await page
    .getByRole('cell', { name: shown(HOURLY_LIMIT) })
    .first()
    .waitFor();
  await shot(page, '22-accounts-limit-column');
  passed(`an hourly spend limit of ${HOURLY_LIMIT} set through the account form shows on its page and in the list's optional column`);
}

/**
 * Issue 34, rerating. The peak rate's price goes from 600 to 900 per minute; the rerating covers the peak
 * week (Saturday to Tuesday, one to two weeks ago), where the lab's calls are known to the second:
 * lab-customer's call across the peak's start (check 10: 60 + 600, now 60 + 900), and two calls recorded
 * here for a second account, lab-other: 180 s on Tuesday 19:00 Tokyo (peak: 1800, now 2700) and 60 s on
 * Saturday 19:00 Tokyo (no peak on weekends: the base price before the deck, 60, unchanged). The calls of
 * today are left out: whether they fall in Tokyo's peak hours depends on when the lab runs.
 */
const RERATE = {
  account: 'lab-other',
  peakRate: 900,
  records: 3,
  changed: 2,
  unchanged: 1,
  difference: 1200n,
  /** Per account, the largest difference first. */
  accounts: [
    { account_tag: 'lab-other', records: '1', difference: '+900' },
    { account_tag: CALL.account, records: '1', difference: '+300' },
  ],
  peakCall: { seconds: 180, fee: 1800n, rerated: 2700n },
  weekendCall: { seconds: 60, fee: 60n },
};

const dayOf = (monday: Date, days: number, hour: number) =>
  new Date(Date.UTC(monday.getUTCFullYear(), monday.getUTCMonth(), monday.getUTCDate() + days, hour, 0, 0));
/** A datetime-local input's text, in UTC. */
const inputValue = (date: Date) => date.toISOString().slice(0, 16);

interface Rerating {
  runId: string;
  peakTag: string;
  balances: { customer: bigint; other: bigint };
}

async function recordCall(account: string, tag: string, begin: Date, seconds: number, fee: bigint): Promise<void> {
  const answer = await agent('record_transaction', {
    account_tag: account,
    transaction_tag: tag,
    source: '1002',
    destination: CALL.destination,
    timestamp_begin: begin.toISOString(),
    timestamp_end: new Date(begin.getTime() + seconds * 1000).toISOString(),
  });
  if (answer.ok !== true) fail(`recordTransaction refused ${tag}: ${JSON.stringify(answer)}`);
  await eventually(
    `${tag} is recorded`,
    async () =>
      (
        await gql<{ Transaction: { fee: number | string } | null }>(
          'query ($account: String, $tag: String) { Transaction(account_tag: $account, transaction_tag: $tag) { fee } }',
          { account, tag },
        )
      ).Transaction,
    (r) => r !== null && String(r.fee) === String(fee),
  );
}

async function reratingDryRun(page: Page): Promise<Rerating> {
  const monday = mondayBeforePeak();
  await gql('mutation { createAccount(account_tag: "lab-other", type: POSTPAID, pricelist_tags: ["lab-retail"]) { id } }');
  const stamp = Date.now();
  const peakTag = `lab-rerate-peak-${stamp}`;
  await recordCall(RERATE.account, peakTag, dayOf(monday, 1, 10), RERATE.peakCall.seconds, RERATE.peakCall.fee);
  await recordCall(
    RERATE.account,
    `lab-rerate-weekend-${stamp}`,
    dayOf(monday, -2, 10),
    RERATE.weekendCall.seconds,
    RERATE.weekendCall.fee,
  );
  const balances = { customer: await balanceOf(CALL.account), other: await balanceOf(RERATE.account) };

  // The price changes through the rate form.
  await openMenu(page, 'Rates');
  await page.getByTestId('rate-timing').filter({ hasText: TIMED.summary }).first().click();
  await page.getByRole('link', { name: 'Edit' }).click();
  await page.getByLabel('Rate', { exact: true }).or(page.getByLabel('Rate *')).first().fill(String(RERATE.peakRate));
  await save(page);
  await page
    .getByTestId('rate-rate')
    .filter({ hasText: String(RERATE.peakRate) })
    .waitFor();

  await openMenu(page, 'Reratings');
  await page.getByTestId('rerating-new').click();
  await page.locator('#rerating-from').fill(inputValue(dayOf(monday, -2, 0)));
  await page.locator('#rerating-to').fill(inputValue(dayOf(monday, 2, 0)));
  await page.locator('#rerating-accounts').fill(`${CALL.account}, ${RERATE.account}`);
  // Every holder of rating data hears of the price change; until the API's copy has, a dry run finds less.
  const read = async () => {
    await page.getByRole('button', { name: 'Dry run' }).click();
    await page.getByTestId('rerating-preview').waitFor();
    const counts: Record<string, string> = {};
    for (const name of ['records', 'changed', 'unchanged', 'unrated', 'difference'])
      counts[name] = (await page.getByTestId(`preview-${name}`).innerText()).trim();
    return counts;
  };
  const expected = {
    records: String(RERATE.records),
    changed: String(RERATE.changed),
    unchanged: String(RERATE.unchanged),
    unrated: '0',
    difference: `+${shown(RERATE.difference)}`,
  };
  await eventually('the dry run', read, (c) => JSON.stringify(c) === JSON.stringify(expected), UI_TIMEOUT_MS);
  const rows = await page.getByTestId('preview-account').all();
  const accounts = [];
  for (const row of rows)
    accounts.push({
      account_tag: (await row.getByTestId('preview-account-tag').innerText()).trim(),
      records: (await row.getByTestId('preview-account-records').innerText()).trim(),
      difference: (await row.getByTestId('preview-account-difference').innerText()).trim(),
    });
  await page.getByTestId('preview-sample').getByText(peakTag).waitFor();
  await shot(page, '23-rerating-dry-run');
  if (JSON.stringify(accounts) !== JSON.stringify(RERATE.accounts))
    fail(`the dry run's per-account table shows ${JSON.stringify(accounts)}`);
  // The dry run changed nothing.
  if ((await balanceOf(RERATE.account)) !== balances.other) fail('the dry run changed a balance');
  passed(
    `after the peak price goes to ${RERATE.peakRate} through the rate form, a dry run on the Reratings page counts ${RERATE.records} records, ${RERATE.changed} to change (+${RERATE.difference}), per account`,
  );
  return { runId: '', peakTag, balances };
}

async function reratingRun(page: Page, rerating: Rerating): Promise<Rerating> {
  await page.getByRole('button', { name: 'Start rerating' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Start rerating' }).click();
  await page.getByTestId('rerating-id').waitFor();
  const runId = (await page.getByTestId('rerating-id').innerText()).trim();
  await shot(page, '24-rerating-started');
  // The show page reads the run again while it runs.
  await page.getByTestId('rerating-state').filter({ hasText: 'done' }).waitFor();
  const counts: Record<string, string> = {};
  for (const name of ['seen', 'changed', 'unchanged', 'skipped', 'difference'])
    counts[name] = (await page.getByTestId(`rerating-${name}`).first().innerText()).trim();
  await shot(page, '25-rerating-done');
  const expected = {
    seen: String(RERATE.records),
    changed: String(RERATE.changed),
    unchanged: String(RERATE.unchanged),
    skipped: '0',
    difference: shown(RERATE.difference),
  };
  if (JSON.stringify(counts) !== JSON.stringify(expected)) fail(`the done rerating shows ${JSON.stringify(counts)}`);
  const charged = {
    customer: rerating.balances.customer - (await balanceOf(CALL.account)),
    other: rerating.balances.other - (await balanceOf(RERATE.account)),
  };
  if (charged.customer !== 300n || charged.other !== 900n)
    fail(`the rerating charged lab-customer ${charged.customer} and lab-other ${charged.other}, expected 300 and 900`);
  await openMenu(page, 'Reratings');
  await page.getByTestId('rerating-state').filter({ hasText: 'done' }).first().waitFor();
  await shot(page, '26-reratings-list');
  passed(
    `the rerating started from the dry run is followed on its page until done: ${RERATE.changed} changed, ${RERATE.unchanged} unchanged, +${RERATE.difference} charged`,
  );
  return { ...rerating, runId };
}

async function reratedRecord(page: Page, rerating: Rerating): Promise<void> {
  await page.getByRole('row').filter({ hasText: 'done' }).first().click();
  await page.getByRole('link', { name: 'Calls of this period' }).click();
  await page.getByText(rerating.peakTag).first().click();
  await page.getByTestId('transaction-reratings').waitFor();
  const seen = {
    fee: (await page.getByTestId('transaction-fee').first().innerText()).trim(),
    before: (await page.getByTestId('rerating-fee-before').allInnerTexts()).map((t) => t.trim()),
    after: (await page.getByTestId('rerating-fee-after').allInnerTexts()).map((t) => t.trim()),
    runs: (await page.getByTestId('rerating-run').allInnerTexts()).map((t) => t.trim()),
  };
  await shot(page, '27-rerated-record');
  const expected = {
    fee: shown(RERATE.peakCall.rerated),
    before: [shown(RERATE.peakCall.fee)],
    after: [shown(RERATE.peakCall.rerated)],
    runs: [rerating.runId],
  };
  if (JSON.stringify(seen) !== JSON.stringify(expected)) fail(`the rerated call's page shows ${JSON.stringify(seen)}`);
  passed(
    `the rerated call's page shows its fee corrected from ${RERATE.peakCall.fee} to ${RERATE.peakCall.rerated}, and its rerating history names the run`,
  );
}

async function readOnlyReratings(browser: Browser): Promise<void> {
  const page = await newPage(browser);
  await login(page, SECRETS.viewer);
  await openMenu(page, 'Reratings');
  await page.getByTestId('rerating-state').filter({ hasText: 'done' }).first().waitFor();
  await page.getByTestId('rerating-new').click();
  await page.getByTestId('rerating-read-only').waitFor();
  const monday = mondayBeforePeak();
  await page.locator('#rerating-from').fill(inputValue(dayOf(monday, -2, 0)));
  await page.locator('#rerating-to').fill(inputValue(dayOf(monday, 2, 0)));
  await page.getByRole('button', { name: 'Dry run' }).click();
  // Rerated already: the same selection has nothing left to change.
  await page.getByTestId('preview-nothing').waitFor();
  const records = (await page.getByTestId('preview-records').innerText()).trim();
  await shot(page, '28-read-only-dry-run');
  if (records !== String(RERATE.records)) fail(`the read-only dry run counts ${records} records`);
  if ((await page.getByRole('button', { name: /start rerating/i }).count()) > 0) fail('a read-only token sees the Start rerating button');
  await openMenu(page, 'Accounts');
  await page.getByText(CALL.account, { exact: true }).first().click();
  await page
    .getByTestId('account-hourly-spend-limit')
    .filter({ hasText: shown(HOURLY_LIMIT) })
    .waitFor();
  if ((await page.getByRole('link', { name: 'Edit' }).count()) > 0) fail('a read-only token sees Edit on an account page');
  await page.context().close();
  passed('a read-only token sees the run and the dry run (nothing left to change), no Start button and no edit of limits');
}

async function run(browser: Browser, dir: string): Promise<void> {
  await readOnlySeesNoEditing(browser);
  const page = await newPage(browser);
  await login(page, SECRETS.ops);
  await createRatingData(page, 5090);
  const tag = await placeCall();
  await callShows(page, tag);
  await topUp(page);
  await rateDeck(page, dir);
  await cdrImport(page, dir);
  await dashboard(page);
  await holidayAndTimeZone(page);
  await timedRate(page);
  await segmentedRecord(page);
  await spendLimit(page);
  const rerating = await reratingRun(page, await reratingDryRun(page));
  await reratedRecord(page, rerating);
  await readOnlyReratings(browser);
}

// ============================================================================ main

async function main(): Promise<number> {
  const keep = process.argv.includes('--keep');
  const headed = process.argv.includes('--headed');
  ensurePackages(['chromium'], ['chromium'], log);
  const chromiumVersion = versionOf(CHROMIUM, ['--version'], /Chromium (\d+(?:\.\d+)*)/);
  rmSync(ARTIFACTS, { recursive: true, force: true });
  mkdirSync(ARTIFACTS, { recursive: true });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'console-lab-'));
  let browser: Browser | undefined;
  let page: Page | undefined;
  const watchdog = setTimeout(() => {
    process.stderr.write(`console lab: no result within ${WATCHDOG_MS / 1000} s; stopping\n`);
    void service?.stop().finally(() => process.exit(3));
  }, WATCHDOG_MS);
  try {
    service = new ServiceProcess();
    await service.start({
      dir,
      logName: 'service',
      env: { RATING_TOKENS: `ops:read+write:${SECRETS.ops},viewer:read:${SECRETS.viewer},switch:agent:${SECRETS.agent}` },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: !headed, args: ['--no-sandbox'] });
    await run(browser, dir);
    log(`console lab: ${checks} checks passed (Chromium ${chromiumVersion})`);
    return 0;
  } catch (err) {
    process.stderr.write(`console lab failed: ${(err as Error).message}\n`);
    const pages = browser?.contexts().flatMap((c) => c.pages()) ?? [];
    page = pages[pages.length - 1];
    if (page) await shot(page, 'failure').catch(() => undefined);
    try {
      process.stderr.write(
        `--- service log (tail)\n${readFileSync(path.join(dir, 'service.log'), 'utf8').split('\n').slice(-30).join('\n')}\n`,
      );
    } catch {
      // no log yet
    }
    return 1;
  } finally {
    clearTimeout(watchdog);
    await browser?.close().catch(() => undefined);
    await service?.stop();
    if (keep) log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(2);
  },
);
