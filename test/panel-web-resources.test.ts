import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import t from 'tap';
import { listApiKeys, SCOPES } from '../domain/tenancy/api-keys.js';
import { assertAxeClean, assertStayedHome, openPanelAs, SCREENSHOTS, shown, useChromium } from './helpers/chromium.js';
import { jsonCall } from './helpers/http.js';
import { panelWebBench } from './helpers/panel.js';

/**
 * The panel's resource pages in Chromium (issue 30, docs/panel.md "The web panel"), against the
 * real web app and Postgres: an owner creates an API key and sees it once (the key works on the
 * public API; afterwards the list shows its id, never its secret), creates a sender (and is told
 * sender_already_exists the second time), turns its consent requirement on, adds and lifts a
 * restriction (kept as history), changes a limit and the IP allow list; a viewer sees the same
 * pages without their controls. Every fact is checked through the API, not only on screen; axe on
 * every page; screenshots under artifacts/screenshots/panel-*.png.
 */

// Creating a sender adds its domain and a DKIM key, stored encrypted: the web dyno needs the key's key.
const { pool, web, tag, acme, users } = await panelWebBench(t, 'panelwebres', { name: 'Acme newsletters', tz: 'Europe/Madrid' }, ['owner', 'viewer'], {
  DKIM_KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
});
const { owner, viewer } = users;

const chromium = useChromium(t, 'the panel resource pages in a browser');
if (chromium) {
  t.test('in Chromium, an owner: keys (shown once), senders, restrictions, settings', async (t) => {
    const { context, page, origin, requests, complaints, read } = await openPanelAs(chromium.browser, web.url, owner, acme.slug);

    // API keys: create one with two scopes and an expiry; the full key once.
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys of Acme newsletters' }).waitFor();
    t.ok(await page.getByRole('cell', { name: 'No keys' }).count() === 0, 'no invented rows');
    await assertAxeClean(t, page, 'keys (empty)');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('alert').filter({ hasText: /scope/i }).waitFor();
    t.pass('no scope: the API refusal (api_key_scope_required) is shown');
    const offered = await page.getByRole('group', { name: 'Scopes (at least one)' }).getByRole('checkbox').evaluateAll((boxes) => boxes.map((b) => (b as HTMLInputElement).value));
    t.same(offered, [...SCOPES], "a checkbox for each scope the service knows (the browser's copy of the list has not drifted)");
    // With the keyboard: focus a scope, Space ticks it, the focus ring shows.
    await page.getByLabel('mail:read', { exact: true }).focus();
    await page.keyboard.press('Space');
    t.equal(await page.getByLabel('mail:read', { exact: true }).isChecked(), true, 'Space ticks a scope');
    t.not(await page.evaluate('getComputedStyle(document.activeElement).outlineStyle'), 'none', 'the focus is visible');
    await page.getByLabel('senders:read', { exact: true }).check();
    await page.getByLabel(/^Expires on/).fill('2099-12-31');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('heading', { name: /^Key [0-9a-f]{16} created$/ }).waitFor();
    const key = await page.getByLabel('The new API key', { exact: true }).inputValue();
    t.match(key, /^crt\.[0-9a-f]{16}\.\S+$/, 'the full key is shown');
    t.ok(await shown(page.getByText('This is the only time the full key is shown')), 'with the shown-once note');
    t.equal(await page.evaluate('document.activeElement?.textContent'), await page.getByRole('heading', { name: /created$/ }).textContent(), 'the focus moves to it');
    const keyId = key.split('.')[1]!;
    await page.getByRole('cell', { name: keyId, exact: true }).waitFor();
    t.pass('the list below already has the new key, by its id');
    await assertAxeClean(t, page, 'keys (new key shown)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-keys-created.png'), fullPage: true });
    const stored = (await listApiKeys(pool, acme.id)).find((k) => k.key_id === keyId);
    t.same(stored?.scopes, ['mail:read', 'senders:read'], 'stored with its scopes (read from Postgres)');
    t.match(stored?.expires_at, /^2099-12-31/, 'and its expiry');
    const used = await jsonCall(web.url, 'GET', '/v1/senders', undefined, { authorization: `Bearer ${key}`, 'x-instance-slug': acme.slug });
    t.equal(used.status, 200, 'the key shown works on the public API');
    await page.getByRole('button', { name: 'Copy key' }).click();
    await page.getByText(/^(Copied\.|Selected: press)/).waitFor();
    t.pass('the copy button copies (or selects the key where no clipboard is allowed)');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    // The list already had the key's row: wait for the redraw itself, the shown key going away.
    await page.getByLabel('The new API key').waitFor({ state: 'detached' });
    await page.getByRole('heading', { name: 'Create a key' }).waitFor();
    t.pass('the full key is gone once the page is drawn again');
    t.ok(await shown(page.getByRole('cell', { name: keyId, exact: true })), 'the key stays listed by its id');
    t.equal(await page.locator('body').innerText().then((text) => text.includes(key.split('.')[2]!)), false, 'the list shows the id, never the secret');
    await page.getByRole('button', { name: `Revoke key ${keyId}` }).click();
    await page.getByRole('status').getByText(`Key ${keyId} was revoked`).waitFor();
    t.equal((await jsonCall(web.url, 'GET', '/v1/senders', undefined, { authorization: `Bearer ${key}`, 'x-instance-slug': acme.slug })).status, 401, 'revoked: the key is refused');
    t.ok(await shown(page.getByRole('row', { name: new RegExp(`${keyId}.*revoked`) })), 'the list marks it revoked');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-keys.png'), fullPage: true });

    // Senders: create one, then the same address again (409), then require consent.
    const address = `news@mail-${tag}.example.org`;
    await page.getByRole('link', { name: 'Senders' }).click();
    await page.getByRole('heading', { name: 'Senders of Acme newsletters' }).waitFor();
    // The instance's sandbox sender, there from its creation, says what it may do.
    const sandboxRow = page.getByRole('row').filter({ hasText: `sandbox@${acme.slug}.sandbox.cartero.test` });
    await sandboxRow.getByRole('cell', { name: 'sandbox: sends only to members' }).waitFor();
    t.pass('the sandbox sender is listed and marked');
    await page.getByLabel('Name', { exact: true }).fill('Acme news');
    await page.getByLabel('Sending address', { exact: true }).fill(address);
    await page.getByRole('button', { name: 'Create sender' }).click();
    await page.getByRole('cell', { name: address, exact: true }).waitFor();
    const senders = (await read('/v1/private/senders')) as { data: Array<{ id: number; email_address: string; is_consent_required: boolean }> };
    t.equal(senders.data.filter((s) => s.email_address === address).length, 1, 'created (read through the API)');
    await page.getByLabel('Name', { exact: true }).fill('Acme news again');
    await page.getByLabel('Sending address', { exact: true }).fill(address);
    await page.getByRole('button', { name: 'Create sender' }).click();
    await page.getByRole('alert').filter({ hasText: /exists/ }).waitFor();
    t.pass('sender_already_exists is shown');
    await page.getByRole('button', { name: `Turn consent on for ${address}` }).click();
    await page.getByRole('status').getByText(`${address} now requires consent`).waitFor();
    const after = (await read('/v1/private/senders')) as typeof senders;
    t.equal(after.data.find((s) => s.email_address === address)?.is_consent_required, true, 'consent required (through the API)');
    await assertAxeClean(t, page, 'senders');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-senders.png'), fullPage: true });

    // Restrictions: add one, lift it; it stays as history.
    const recipient = `blocked-${tag}@example.org`;
    await page.getByRole('link', { name: 'Restrictions' }).click();
    await page.getByRole('heading', { name: 'Restrictions of Acme newsletters' }).waitFor();
    await page.getByLabel('Recipient', { exact: true }).fill(recipient);
    await page.getByRole('button', { name: 'Add restriction' }).click();
    await page.getByRole('row', { name: new RegExp(`${recipient}.*in force`) }).waitFor();
    const restrictionOf = async () => ((await read('/v1/private/restrictions')) as { data: Array<{ recipient: string; reason: string; deleted_at: string | null }> }).data.filter((r) => r.recipient === recipient);
    t.match(await restrictionOf(), [{ reason: 'unspecified', deleted_at: null }], 'in force (through the API)');
    await page.getByRole('button', { name: `Lift the restriction of ${recipient}` }).click();
    await page.getByRole('status').getByText(`The restriction of ${recipient} was lifted`).waitFor();
    t.ok(await shown(page.getByRole('row', { name: new RegExp(`${recipient}.*lifted`) })), 'kept in the list, marked lifted');
    const lifted = await restrictionOf();
    t.equal(lifted.length, 1);
    t.ok(lifted[0]?.deleted_at, 'lifted, as history (through the API)');
    await assertAxeClean(t, page, 'restrictions');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-restrictions.png'), fullPage: true });

    // Settings: the time zone, a limit changed, a bad network refused, the allow list saved.
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Settings of Acme newsletters' }).waitFor();
    t.ok(await shown(page.getByText('Europe/Madrid')), 'the time zone is shown');
    await page.getByLabel('Burst (mails)').fill('7');
    await page.getByLabel('Send rate (mails per second)').fill('2.5');
    await page.getByRole('button', { name: 'Save limits' }).click();
    await page.getByRole('status').getByText('The limits were saved').waitFor();
    const settings = async () => (await read('/v1/private/instance')) as { send_burst: number | null; send_rate_per_second: number | null; monthly_quota: number | null; allowed_cidrs: string[] };
    t.match(await settings(), { send_burst: 7, send_rate_per_second: 2.5, monthly_quota: null }, 'saved (through the API); an empty quota stays no limit');
    t.equal(await page.getByLabel('Burst (mails)').inputValue(), '7', 'the form shows the saved value');
    await page.getByLabel('Allowed addresses and networks').fill('not-a-network');
    await page.getByRole('button', { name: 'Save allow list' }).click();
    await page.getByRole('alert').filter({ hasText: /.+/ }).waitFor();
    t.same((await settings()).allowed_cidrs, [], 'invalid_cidr: shown, nothing changed');
    await page.getByLabel('Allowed addresses and networks').fill('192.0.2.0/24\n198.51.100.7');
    await page.getByRole('button', { name: 'Save allow list' }).click();
    await page.getByRole('status').getByText('The IP allow list was saved').waitFor();
    t.equal((await settings()).allowed_cidrs.length, 2, 'the allow list saved');
    await assertAxeClean(t, page, 'settings (owner)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-settings.png'), fullPage: true });

    // The refusals asked for above are the expected console errors (the browser logs a refused fetch).
    assertStayedHome(t, { requests, complaints, origin }, /status of (400|409)/);
    await context.close();
  });

  t.test('in Chromium, a viewer: the same pages without their controls; keys are the owner’s', async (t) => {
    const { context, page } = await openPanelAs(chromium.browser, web.url, viewer);
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByText("API keys are the owner's").waitFor();
    t.equal(await page.getByRole('button', { name: 'Create key' }).count(), 0, 'keys: told they are the owner’s, no form');
    await assertAxeClean(t, page, 'keys (viewer)');
    await page.getByRole('link', { name: 'Senders' }).click();
    await page.getByRole('heading', { name: 'Senders of Acme newsletters' }).waitFor();
    await page.getByRole('cell', { name: `news@mail-${tag}.example.org`, exact: true }).waitFor();
    t.equal(await page.getByRole('button', { name: /Create sender|Turn consent/ }).count(), 0, 'senders listed, no control');
    await page.getByRole('link', { name: 'Restrictions' }).click();
    await page.getByRole('heading', { name: 'Restrictions of Acme newsletters' }).waitFor();
    t.equal(await page.getByRole('button', { name: /Add restriction|^Lift/ }).count(), 0, 'restrictions listed, no control');
    await assertAxeClean(t, page, 'restrictions (viewer)');
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Settings of Acme newsletters' }).waitFor();
    t.ok(await shown(page.getByText('7 mails', { exact: true })), 'the limits read');
    t.equal(await page.getByRole('button', { name: /^Save/ }).count(), 0, 'settings: no form');
    await assertAxeClean(t, page, 'settings (viewer)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-settings-viewer.png'), fullPage: true });
    await context.close();
  });
}


