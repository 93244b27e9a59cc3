import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import t from 'tap';
import { createInstance } from '../domain/tenancy/instances.js';
import { WEBHOOK_EVENT_TYPES } from '../domain/webhooks/event-types.js';
import { assertAxeClean, assertStayedHome, openPanelAs, SCREENSHOTS, settled, shown, signInToPanel, useChromium } from './helpers/chromium.js';
import { jsonCall } from './helpers/http.js';
import { makePanelUser, panelHeaders, panelLogin } from './helpers/panel.js';
import { startSendStack, waitFor } from './helpers/send-stack.js';
import { startReceiver, verifies, type Received } from './helpers/webhook-receiver.js';

/**
 * The panel's Webhooks pages in Chromium (issue 31, docs/panel.md "Webhooks"), against the real
 * web app, Postgres, a worker dyno as its own process and a real receiver on loopback run by the
 * test: an admin creates a webhook pointing at the receiver and sees its secret once, sends the
 * test event and sees its delivery listed (the receiver got it, signed with that secret), retries
 * it and replays a range (each arriving again), pauses and resumes, rotates the secret (both
 * secrets verify during the overlap), edits and deletes; a viewer sees the pages without a
 * control and filters the deliveries by outcome (a refused event's failed attempts, then the
 * succeeded ones, each time the API's rows). Every fact is checked at the receiver or through the API; axe on every page;
 * screenshots under artifacts/screenshots/panel-webhooks*.png.
 */

const stack = await startSendStack(t, { label: 'panelwebhooks', publicUrl: 'https://links.panelwebhooks.test', webEnv: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
const { dbs, url } = stack;
stack.spawnWorker({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '0,1,1', WEBHOOK_TIMEOUT_SECONDS: '2' });
const receiver = await startReceiver(t);
const tag = randomBytes(3).toString('hex');
const acme = await createInstance(dbs.pool, { slug: `acme-${tag}`, name: 'Acme newsletters', tz: 'Europe/Madrid' });
const admin = await makePanelUser(dbs.pool, [{ instanceId: acme.id, role: 'admin' }]);
const viewer = await makePanelUser(dbs.pool, [{ instanceId: acme.id, role: 'viewer' }]);
const token = await panelLogin(url, admin);
const api = (method: string, path: string, body?: unknown) => jsonCall(url, method, path, body, panelHeaders(token, acme.slug));

const PATH = '/panel-hook';
/** The requests at PATH answered 2xx, once there are `n`; `type` keeps one event type. */
const arrived = (n: number, type?: string) =>
  waitFor(`${n} ${type ?? ''} deliveries at ${PATH}`, async () => {
    const ok = receiver.at(PATH).filter((r) => r.answered !== undefined && r.answered < 300 && (!type || r.event?.type === type));
    return ok.length >= n ? ok : undefined;
  }, { ms: 30_000 });
const ids = (rs: Received[]) => rs.map((r) => r.headers['webhook-id']);

const chromium = useChromium(t, 'the panel webhooks pages in a browser');
if (chromium) {
  let hookId = 0;

  t.test('in Chromium, an admin: create (secret once), test event, retry, replay, pause and resume, rotate, edit', async (t) => {
    // UTC in the browser, so the replay form's local times are the test's ISO times.
    const { context, page, origin, requests, complaints } = await openPanelAs(chromium.browser, url, admin, undefined, { timezoneId: 'UTC' });

    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks of Acme newsletters' }).waitFor();
    t.ok(await shown(page.getByText('0 webhooks')), 'none yet');
    const offered = await page.getByRole('group', { name: 'Event types' }).getByRole('checkbox').evaluateAll((boxes) => boxes.map((b) => (b as HTMLInputElement).value));
    t.same(offered, [...WEBHOOK_EVENT_TYPES], "a checkbox per event type the service delivers (the browser's copy has not drifted)");
    await assertAxeClean(t, page, 'webhooks (empty)');

    // A URL the API refuses: its 422, with the field, shown.
    await page.getByLabel('Name', { exact: true }).fill('Orders');
    await page.getByLabel('Receiver URL', { exact: true }).fill('ftp://example.com/hooks');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByRole('alert').filter({ hasText: /url/ }).waitFor();
    t.pass('the API refusal names the URL');

    await page.getByLabel('Receiver URL', { exact: true }).fill(receiver.url(PATH));
    // With the keyboard: focus an event type, Space ticks it.
    await page.getByLabel('restriction.created', { exact: true }).focus();
    await page.keyboard.press('Space');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByRole('heading', { name: 'Signing secret of Orders' }).waitFor();
    const secret = await page.getByLabel('The signing secret', { exact: true }).inputValue();
    t.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/, 'the secret is shown');
    t.ok(await shown(page.getByText('This is the only time the secret is shown')), 'with the shown-once note');
    t.equal(await settled(page, 'document.activeElement?.id', (v) => v === 'secret-title'), 'secret-title', 'the focus moves to it');
    t.ok(await shown(page.getByRole('status').getByText('Webhook Orders was created')), 'announced');
    const listed = (await api('GET', '/v1/private/webhooks')).body.data as Array<{ id: number; name: string; url: string; events: string[] | null }>;
    t.match(listed, [{ name: 'Orders', url: receiver.url(PATH), events: ['restriction.created'] }], 'created with the event ticked (through the API)');
    hookId = listed[0]!.id;
    await assertAxeClean(t, page, 'webhook (secret shown)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-webhooks-created.png'), fullPage: true });
    await page.getByRole('button', { name: 'Copy secret' }).click();
    await page.getByText(/^(Copied\.|Selected: press)/).waitFor();
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByLabel('The signing secret').waitFor({ state: 'detached' });
    t.notOk((await page.locator('body').innerText()).includes(secret.slice(6)), 'the secret is gone once the page is drawn again');

    // The test event, sent with the keyboard: it arrives signed, and the table follows it to its outcome.
    await page.getByRole('button', { name: 'Send test event' }).focus();
    await page.keyboard.press('Enter');
    const [test] = await arrived(1, 'webhook.test');
    t.ok(verifies(secret, test!), 'the receiver got the test event, signed with the secret shown');
    const testRow = page.getByRole('row').filter({ hasText: test!.headers['webhook-id']! });
    t.ok(await shown(testRow.filter({ hasText: 'succeeded' }).filter({ hasText: 'HTTP 200' }), 20_000), 'its delivery is listed: succeeded, HTTP 200');
    t.ok(await shown(testRow.getByText(/^\d+ ms$/)), 'with its timing');
    t.ok(await shown(testRow.getByRole('cell', { name: 'ok', exact: true })), "and the receiver's answer");
    const attempts = (await api('GET', `/v1/private/webhooks/${hookId}/deliveries`)).body.data as Array<{ delivery_id: number }>;

    // Retry that delivery: the same event arrives again.
    await page.getByRole('button', { name: `Retry delivery ${attempts[0]!.delivery_id} (webhook.test)` }).click();
    await page.getByRole('status').getByText('is sent again now').waitFor();
    const tests = await arrived(2, 'webhook.test');
    t.same(ids(tests), [test!.headers['webhook-id'], test!.headers['webhook-id']], 'the retried event arrived again (same webhook-id)');
    t.ok(await shown(page.getByRole('row').filter({ hasText: test!.headers['webhook-id']! }).nth(1)), 'listed twice');

    // A real event (a restriction), then the replay of its range: it arrives again.
    const since = new Date(Date.now() - 2_000).toISOString();
    t.equal((await api('POST', '/v1/private/restrictions', { recipient: `replayed-${tag}@example.org` })).status, 201);
    const [original] = await arrived(1, 'restriction.created');
    await page.getByLabel('From (your local time)').fill(since.slice(0, 19));
    await page.getByRole('button', { name: 'Replay events' }).click();
    await page.getByRole('status').getByText('1 event queued to be sent again').waitFor();
    const replayed = await arrived(2, 'restriction.created');
    t.same(ids(replayed), [original!.headers['webhook-id'], original!.headers['webhook-id']], 'the replayed event arrived again');

    // Pause: the toggle keeps the focus and says Resume; a replay is then refused; resume.
    await page.getByRole('button', { name: 'Pause webhook' }).click();
    await page.getByRole('status').getByText('Orders is paused').waitFor();
    await page.getByRole('button', { name: 'Resume webhook' }).waitFor();
    t.equal((await api('GET', `/v1/private/webhooks/${hookId}`)).body.is_active, false, 'paused (through the API)');
    t.ok(await shown(page.locator('dd', { hasText: /^paused: nothing is delivered until it is resumed$/ })), 'the page says so');
    t.equal(await settled(page, 'document.activeElement?.id', (v) => v === 'hook-toggle'), 'hook-toggle', 'the focus stays on the toggle');
    await page.getByLabel('From (your local time)').fill(since.slice(0, 19));
    await page.getByRole('button', { name: 'Replay events' }).click();
    await page.getByRole('alert').filter({ hasText: /paused/ }).waitFor();
    t.pass('a replay while paused: the API refusal (webhook_inactive) is shown');
    await assertAxeClean(t, page, 'webhook (paused)');
    await page.getByRole('button', { name: 'Resume webhook' }).click();
    await page.getByRole('status').getByText('Orders is active again').waitFor();
    t.equal((await api('GET', `/v1/private/webhooks/${hookId}`)).body.is_active, true, 'resumed (through the API)');

    // Rotate: the new secret once, the overlap explained; both secrets verify the next delivery.
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('heading', { name: 'New signing secret of Orders' }).waitFor();
    const rotated = await page.getByLabel('The signing secret', { exact: true }).inputValue();
    t.not(rotated, secret, 'a new secret');
    t.ok(await shown(page.getByText(/The previous secret keeps signing beside this one until .+ \(24 hours\)/)), 'the 24-hour overlap is explained');
    await assertAxeClean(t, page, 'webhook (secret rotated)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-webhooks-rotated.png'), fullPage: true });
    await page.getByRole('button', { name: 'Send test event' }).click();
    const third = (await arrived(3, 'webhook.test'))[2]!;
    t.ok(verifies(rotated, third) && verifies(secret, third), 'the next delivery verifies with the new secret and, for now, the previous one');

    // Edit: rename, every event type.
    await page.getByLabel('Name', { exact: true }).fill('Orders EU');
    await page.getByLabel('restriction.created', { exact: true }).uncheck();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { name: 'Webhook Orders EU' }).waitFor();
    t.match((await api('GET', `/v1/private/webhooks/${hookId}`)).body, { name: 'Orders EU', events: null }, 'saved (through the API): every event type');
    await assertAxeClean(t, page, 'webhook (admin)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-webhooks.png'), fullPage: true });

    // The refusals asked for above are the expected console errors (the browser logs a refused fetch).
    assertStayedHome(t, { requests, complaints, origin }, /status of (409|422)/);
    await context.close();
  });

  t.test('in Chromium, a viewer: the webhooks and their deliveries filtered by outcome, no control', async (t) => {
    // A test event the receiver refuses (HTTP 500) until its retries are spent: failed attempts beside the succeeded ones.
    receiver.on(PATH, () => ({ status: 500, body: 'down' }));
    t.equal((await api('POST', `/v1/private/webhooks/${hookId}/test`)).status, 202);
    type Row = { id: number; event_id: string; status: string; delivery_status: string };
    const attemptsOf = async (status?: string) => (await api('GET', `/v1/private/webhooks/${hookId}/deliveries${status ? `?status=${status}` : ''}`)).body.data as Row[];
    const failed = await waitFor('the refused delivery to fail for good', async () => {
      const rows = await attemptsOf('failed');
      return rows.length && rows.every((a) => a.delivery_status === 'failed') ? rows : undefined;
    }, { ms: 30_000 });
    receiver.on(PATH, () => ({ status: 200 }));
    const succeeded = await attemptsOf('succeeded');
    t.ok(failed.length >= 1 && succeeded.length >= 1, `${failed.length} failed and ${succeeded.length} succeeded attempts (through the API)`);

    const { context, page } = await openPanelAs(chromium.browser, url, viewer);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks of Acme newsletters' }).waitFor();
    t.equal(await page.getByRole('button', { name: 'Create webhook' }).count(), 0, 'no create form');
    t.ok(await shown(page.getByText('Your role here is viewer')), 'told who may act');
    await assertAxeClean(t, page, 'webhooks (viewer)');
    await page.getByRole('link', { name: 'Orders EU' }).click();
    await page.getByRole('heading', { name: 'Webhook Orders EU' }).waitFor();
    t.ok(await shown(page.getByRole('row').filter({ hasText: 'webhook.test' }).first()), 'the deliveries are listed');

    // The outcome filter: the table holds exactly the API's attempts of that outcome.
    const shownRows = page.locator('#deliveries-table tbody tr');
    await page.getByLabel('Outcome', { exact: true }).selectOption('failed');
    await page.getByRole('status').getByText(`Deliveries with the outcome failed: ${failed.length} failed attempt`).waitFor();
    t.equal(await shownRows.count(), failed.length, 'as many rows as failed attempts');
    t.same(await shownRows.locator('td:nth-child(2) code').allInnerTexts(), failed.map((a) => a.event_id), 'the failed attempts, newest first');
    t.same(new Set(await shownRows.locator('td:nth-child(4)').allInnerTexts()), new Set(['failed HTTP 500']), 'each failed, HTTP 500');
    await assertAxeClean(t, page, 'webhook deliveries (failed only)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-webhooks-failed.png'), fullPage: true });
    await page.getByLabel('Outcome', { exact: true }).selectOption('succeeded');
    await page.getByRole('status').getByText(`Deliveries with the outcome succeeded: ${succeeded.length} succeeded attempt`).waitFor();
    t.same(await shownRows.locator('td:nth-child(2) code').allInnerTexts(), succeeded.map((a) => a.event_id), 'then the succeeded ones');
    t.same(new Set(await shownRows.locator('td:nth-child(4)').allInnerTexts()), new Set(['succeeded HTTP 200']), 'each succeeded, HTTP 200');
    await page.getByLabel('Outcome', { exact: true }).selectOption('');
    await page.getByRole('status').getByText('Deliveries with every outcome').waitFor();
    t.equal(await shownRows.count(), (await attemptsOf()).length, 'then every attempt again');
    const buttons = await page.getByRole('main').getByRole('button').allTextContents();
    t.same(buttons, ['Refresh deliveries'], 'no control but reading the deliveries again');
    t.equal(await page.getByRole('textbox').count(), 0, 'no form field');
    await assertAxeClean(t, page, 'webhook (viewer)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-webhooks-viewer.png'), fullPage: true });
    await context.close();
  });

  t.test('in Chromium, an admin deletes the webhook (after a confirmation)', async (t) => {
    const context = await chromium.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void (dialogs.length === 1 ? d.dismiss() : d.accept());
    });
    await signInToPanel(page, url, admin);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('link', { name: 'Orders EU' }).click();
    await page.getByRole('button', { name: 'Delete webhook' }).click();
    t.equal((await api('GET', `/v1/private/webhooks/${hookId}`)).status, 200, 'dismissed: still there');
    await page.getByRole('button', { name: 'Delete webhook' }).click();
    await page.getByRole('status').getByText('The webhook Orders EU was deleted').waitFor();
    await page.getByRole('heading', { name: 'Webhooks of Acme newsletters' }).waitFor();
    t.match(dialogs[0], /Delete the webhook Orders EU\?/, 'asked first');
    t.equal((await api('GET', `/v1/private/webhooks/${hookId}`)).body.code, 'webhook_not_found', 'deleted (through the API)');
    t.ok(await shown(page.getByText('0 webhooks')), 'the list is empty again');
    await context.close();
  });
}
