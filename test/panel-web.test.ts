import { join } from 'node:path';
import t from 'tap';
import { PANEL_CSP } from '../api/pages/panel-page.js';
import { listMembers } from '../domain/panel/members.js';
import { createInstance } from '../domain/tenancy/instances.js';
import { assertAxeClean, openFromMenu, SCREENSHOTS, shown, useChromium, watchedPage } from './helpers/chromium.js';
import { jsonCall } from './helpers/http.js';
import { makePanelUser, panelHeaders, panelLogin, panelWebBench } from './helpers/panel.js';

/**
 * The operator panel in a browser (issue 30, docs/panel.md "The web panel"), against the real web
 * app and Postgres: /panel and its modules come from this service under their CSP; then in Debian's
 * Chromium (playwright-core) a member signs in with the keyboard, sees their instances, switches
 * instance, reads Members as a viewer (no owner controls) and as an owner adds a member and changes
 * their role, opens another page, and signs out (the session is over on the server too);
 * a session ended elsewhere brings the login form back.
 * axe-core reads every page; every request stays on the origin; the token is never in a cookie or
 * in storage (the panel keeps it in memory: no CSRF). Screenshots under artifacts/screenshots/.
 */

const { pool, web, tag, acme } = await panelWebBench(t, 'panelweb', { name: 'Acme newsletters' }, []);
const bravo = await createInstance(pool, { slug: `bravo-${tag}`, name: 'Bravo shop' });
const owner = await makePanelUser(pool, [
  { instanceId: acme.id, role: 'owner' },
  { instanceId: bravo.id, role: 'viewer' },
]);
const colleague = await makePanelUser(pool, [{ instanceId: bravo.id, role: 'owner' }]);
const newcomer = await makePanelUser(pool);

t.test('GET /panel: the page, its modules and its style sheet, all from this service under the CSP', async (t) => {
  const res = await fetch(`${web.url}/panel`);
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/html/);
  t.equal(res.headers.get('content-security-policy'), PANEL_CSP);
  t.match(PANEL_CSP, /frame-ancestors 'none'/);
  const directive = (name: string) => PANEL_CSP.split(';').map((d) => d.trim()).find((d) => d.startsWith(`${name} `));
  t.equal(directive('script-src'), "script-src 'self'", 'no inline script, no eval');
  t.notMatch(PANEL_CSP, /unsafe-eval/);
  // Inline style only for the template preview's srcdoc frames, which inherit this policy (docs/panel.md, Templates).
  t.equal(directive('style-src'), "style-src 'self' 'unsafe-inline'");
  t.equal(directive('frame-src'), undefined, 'no frame-src: nothing framed by URL (default-src none), srcdoc frames only');
  t.equal(res.headers.get('x-frame-options'), 'DENY');
  t.equal(res.headers.get('set-cookie'), null, 'no cookie');
  const html = await res.text();
  t.notMatch(html, /<script>|<script [^>]*>[^<]/, 'no inline script');
  t.notMatch(html, /https?:\/\//, 'the page names no other site');
  const assets = [...html.matchAll(/(?:src|href)="(\/panel\/app\/[^"]+)"/g)].map((m) => m[1]!);
  t.ok(assets.includes('/panel/app/main.js') && assets.includes('/panel/app/panel.css'), `the entry and the style sheet (${assets.length} assets)`);
  let gzipped = 0;
  for (const src of assets) {
    const asset = await fetch(`${web.url}${src}`);
    t.equal(asset.status, 200, `${src} is served`);
    t.match(asset.headers.get('content-type'), src.endsWith('.css') ? /text\/css/ : /javascript/);
    const body = Buffer.from(await asset.arrayBuffer());
    if (src.endsWith('.js')) gzipped += (await import('node:zlib')).gzipSync(body, { level: 9 }).length;
  }
  t.ok(gzipped > 1000 && gzipped < 300 * 1024, `JavaScript shipped: ${gzipped} bytes gzipped (each module apart), under 300 kB`);
  t.equal((await fetch(`${web.url}/panel/app/../../package.json`)).status, 404, 'nothing but the listed files');
  t.equal((await fetch(`${web.url}/panel/app/main.js.map`)).status, 404, 'not even a source map');
  t.equal((await fetch(`${web.url}/panel`, { method: 'POST' })).status, 405, 'another verb: 405 as anywhere');
});

t.test('the session is a bearer token the page holds: no cookie, so a cross-site request carries nothing', async (t) => {
  const login = await fetch(`${web.url}/v1/private/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: owner.email, password: owner.password }) });
  t.equal(login.status, 201);
  t.equal(login.headers.get('set-cookie'), null, 'login sets no cookie');
  const token = ((await login.json()) as { token: string }).token;
  // What a page of another site can make a browser send: a form post, with whatever cookies it has.
  const forged = await fetch(`${web.url}/v1/private/members`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example', 'x-instance-slug': acme.slug, cookie: `session=${token}` },
    body: `email=${encodeURIComponent(newcomer.email)}&role=owner`,
  });
  t.equal(forged.status, 401, 'refused: only the Authorization header authenticates');
  t.equal((await listMembers(acme.id, pool)).some((m) => m.email === newcomer.email), false, 'nobody was added');
  const preflight = await fetch(`${web.url}/v1/private/members`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' } });
  t.equal(preflight.headers.get('access-control-allow-origin'), null, 'no CORS: another origin cannot send the header either');
  await jsonCall(web.url, 'DELETE', '/v1/private/sessions/current', undefined, panelHeaders(token));
});

const chromium = useChromium(t, 'the panel in a browser');
if (chromium) {
  t.test('in Chromium: sign in, instances, switch, members (viewer, owner), another page, sign out', async (t) => {
    const { page, origin, requests, complaints } = await watchedPage(chromium.browser, web.url, { width: 1280, height: 800 });
    page.on('dialog', (d) => void d.accept());

    // Usable: the form is drawn and the Email field has the focus.
    const started = Date.now();
    await page.goto(`${web.url}/panel`);
    await page.getByLabel('Email', { exact: true }).waitFor();
    const waitedMs = Date.now() - started;
    // The app's own mark: the form drawn and focused, from the navigation's start (not asserted: a loaded CI host is slower).
    const usable = (await page.evaluate('performance.getEntriesByName("panel-usable")[0]?.startTime')) as number;
    const response = (await page.evaluate('performance.getEntriesByType("navigation")[0].responseEnd')) as number;
    t.ok(usable > 0, 'the app marked when it was usable');
    t.comment(`/panel usable ${usable.toFixed(0)} ms after navigation start (page received at ${response.toFixed(0)} ms; ${waitedMs} ms as playwright waited)`);
    t.equal(await page.evaluate('document.activeElement?.getAttribute("name")'), 'email', 'the Email field has the focus');
    t.ok(await shown(page.getByLabel('Password', { exact: true })), 'a labelled Password field');
    t.ok(await shown(page.getByRole('button', { name: 'Sign in', exact: true })), 'a Sign in button');
    await assertAxeClean(t, page, 'login');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-login.png') });

    // A wrong password: the API's message, and still on the form.
    await page.getByLabel('Email', { exact: true }).fill(owner.email);
    await page.getByLabel('Password', { exact: true }).fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('not right').waitFor();
    t.pass('a refused login shows why');

    // With the keyboard only: type, Tab, type, Enter.
    await page.getByLabel('Email', { exact: true }).focus();
    await page.keyboard.press('Tab');
    t.equal(await page.evaluate('document.activeElement?.getAttribute("name")'), 'password', 'Tab goes to Password');
    t.not(await page.evaluate('getComputedStyle(document.activeElement).outlineStyle'), 'none', 'the focus is visible');
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type(owner.password);
    const signedIn = page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/private/sessions' && r.status() === 201);
    await page.keyboard.press('Enter');
    const token = ((await (await signedIn).json()) as { token: string }).token;

    await page.getByRole('heading', { name: 'Instances', exact: true }).waitFor();
    for (const i of [acme, bravo]) t.ok(await shown(page.getByRole('cell', { name: i.slug, exact: true })), `instance ${i.slug} listed`);
    t.ok(await shown(page.getByRole('row', { name: /Acme newsletters .* owner/ })), 'with the role in each');
    t.same(await page.context().cookies(), [], 'no cookie');
    t.equal(await page.evaluate('localStorage.length + sessionStorage.length'), 0, 'nothing in storage: the token is in memory');
    await assertAxeClean(t, page, 'instances');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-instances.png') });

    // Switch to Bravo (from the list), where this user is a viewer: Members without the owner's controls.
    await page.getByRole('button', { name: 'Work on Bravo shop' }).click();
    await page.getByRole('status').getByText('Now working in Bravo shop').waitFor();
    t.equal(await page.getByLabel('Instance', { exact: true }).inputValue(), bravo.slug, 'the switcher follows');
    await openFromMenu(page, 'Members', 'Members of Bravo shop');
    t.ok(await shown(page.getByRole('cell', { name: colleague.email, exact: true })), "Bravo's members are listed");
    t.equal(await page.getByRole('button', { name: 'Add member' }).count(), 0, 'a viewer gets no Add member');
    t.equal(await page.getByRole('button', { name: /^Remove / }).count(), 0, 'nor Remove');
    await assertAxeClean(t, page, 'members (viewer)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-members-viewer.png') });

    // Back to Acme (owner) with the switcher: invite the newcomer as admin (a member once it
    // accepts: test/panel-web-invitations.test.ts shows that side), then make them a viewer.
    await page.getByLabel('Instance', { exact: true }).selectOption(acme.slug);
    await page.getByRole('heading', { name: 'Members of Acme newsletters' }).waitFor();
    await page.getByLabel('Email', { exact: true }).fill(newcomer.email);
    await page.getByLabel('Role', { exact: true }).selectOption('admin');
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    await page.getByRole('row', { name: new RegExp(`${newcomer.email.replace(/[.]/g, '\\.')} admin invited`) }).waitFor();
    const roleOf = async () => (await listMembers(acme.id, pool)).find((m) => m.email === newcomer.email)?.role;
    t.equal(await roleOf(), undefined, 'invited, not a member (read from Postgres)');
    const newcomerToken = await panelLogin(web.url, newcomer);
    const [invitation] = (await jsonCall(web.url, 'GET', '/v1/private/invitations', undefined, panelHeaders(newcomerToken))).body.data;
    t.equal((await jsonCall(web.url, 'POST', `/v1/private/invitations/${invitation.id}/accept`, undefined, panelHeaders(newcomerToken))).status, 200);
    t.equal(await roleOf(), 'admin', 'accepted: a member as admin');
    await page.getByRole('link', { name: 'Instances', exact: true }).click();
    await page.getByRole('heading', { name: 'Instances', exact: true }).waitFor();
    await page.getByRole('link', { name: 'Members', exact: true }).click();
    await page.getByRole('cell', { name: newcomer.email, exact: true }).waitFor();
    await page.getByLabel(`Role of ${newcomer.email}`, { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: `Change role of ${newcomer.email}` }).click();
    await page.getByRole('status').getByText(`${newcomer.email} is now viewer`).waitFor();
    t.equal(await roleOf(), 'viewer', 'the role changed');
    // The last owner cannot demote themselves: the API's refusal is shown.
    await page.getByLabel(`Role of ${owner.email}`, { exact: true }).selectOption('admin');
    await page.getByRole('button', { name: `Change role of ${owner.email}` }).click();
    await page.getByRole('alert').filter({ hasText: /owner/ }).waitFor();
    t.pass('member_last_owner is shown');
    t.equal(await page.getByLabel(`Role of ${owner.email}`, { exact: true }).inputValue(), 'owner', 'and the select shows the role kept');
    await assertAxeClean(t, page, 'members (owner)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-members-owner.png'), fullPage: true });
    await page.getByRole('button', { name: `Remove ${newcomer.email}` }).click();
    await page.getByRole('status').getByText(`${newcomer.email} was removed`).waitFor();
    t.equal(await roleOf(), undefined, 'removed');

    // Another page from the navigation (its own test: panel-web-resources.test.ts), marked current.
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys of Acme newsletters' }).waitFor();
    t.equal(await page.getByRole('link', { name: 'API keys' }).getAttribute('aria-current'), 'page', 'the navigation marks the current page');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();
    t.ok(await shown(page.getByRole('button', { name: 'Sign in' })), 'back to the login form');
    const after = await jsonCall(web.url, 'GET', '/v1/private/instances', undefined, panelHeaders(token));
    t.equal(after.status, 401, "the session ended on the server: its token is refused");

    // A session that ends elsewhere (here: signed out through the API): the next call brings back the form.
    await page.getByLabel('Email', { exact: true }).fill(owner.email);
    await page.getByLabel('Password', { exact: true }).fill(owner.password);
    const again = page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/private/sessions' && r.status() === 201);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const second = ((await (await again).json()) as { token: string }).token;
    await page.getByRole('heading', { name: 'Instances', exact: true }).waitFor();
    t.equal((await jsonCall(web.url, 'DELETE', '/v1/private/sessions/current', undefined, panelHeaders(second))).status, 204);
    await page.getByRole('link', { name: 'Members', exact: true }).click();
    await page.getByText('Your session has ended. Please sign in again.').waitFor();
    t.ok(await shown(page.getByRole('button', { name: 'Sign in' })), 'an ended session: the login form again, saying why');

    const elsewhere = requests.filter((u) => !u.startsWith('data:') && new URL(u).origin !== origin);
    t.same(elsewhere, [], `no request left the origin (${requests.length} requests)`);
    // The refused login, the last owner's refusal and the ended session are the expected console errors (the browser logs a refused fetch).
    t.same(complaints.filter((c) => !/status of (401|409)/.test(c)), [], 'no other console error, nothing refused by the CSP');
    await page.close();
  });
}

