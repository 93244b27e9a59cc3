import { join } from 'node:path';
import t from 'tap';
import { listMembers } from '../domain/panel/members.js';
import { createInstance } from '../domain/tenancy/instances.js';
import { assertAxeClean, assertStayedHome, openFromMenu, openPanelAs, SCREENSHOTS, shown, signInToPanel, useChromium } from './helpers/chromium.js';
import { makePanelUser, panelWebBench } from './helpers/panel.js';

/**
 * Issue 37 in the browser (docs/panel.md, Invitations): an owner invites from the Members page
 * (the row says invited, nobody is a member yet); the invitee, with no instance yet, sees the
 * invitation, declines one and accepts another, and lands in the instance; a member leaves with
 * the Leave button and loses the instance at once; the last owner's Leave is refused with the
 * API's reason. Debian's Chromium through playwright-core, axe-core on each new page.
 */

const { pool, web, tag, acme, users } = await panelWebBench(t, 'panelwebinvite', { name: 'Acme newsletters' }, ['owner']);
const { owner } = users;
const bravo = await createInstance(pool, { slug: `bravo-${tag}`, name: 'Bravo shop' });
const ownerOfBravo = await makePanelUser(pool, [{ instanceId: bravo.id, role: 'owner' }]);
const invitee = await makePanelUser(pool);

const isMember = async (instanceId: number, email: string) => (await listMembers(instanceId, pool)).some((m) => m.email === email);

const chromium = useChromium(t, 'invitations in a browser');
if (chromium) {
  t.test('in Chromium: invite, the invitee declines one and accepts another, leaves; the last owner cannot leave', async (t) => {
    // Acme's owner invites the invitee as admin; Bravo's owner invites it too.
    const { context, page, origin, requests, complaints } = await openPanelAs(chromium.browser, web.url, owner);
    await openFromMenu(page, 'Members', 'Members of Acme newsletters');
    await page.getByLabel('Email', { exact: true }).fill(invitee.email);
    await page.getByLabel('Role', { exact: true }).selectOption('admin');
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    await page.getByRole('status').getByText(`${invitee.email} was invited as admin`).waitFor();
    t.ok(await shown(page.getByRole('row', { name: new RegExp(`${invitee.email.replace(/\./g, '\\.')} admin invited`) })), 'the row says invited');
    t.notOk(await isMember(acme.id, invitee.email), 'not a member (read from Postgres)');
    await assertAxeClean(t, page, 'members with an invitation (owner)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-members-invited.png'), fullPage: true });
    // The last owner's Leave: refused, the reason shown.
    await page.getByRole('button', { name: 'Leave Acme newsletters' }).click();
    await page.getByRole('alert').filter({ hasText: /owner/ }).waitFor();
    t.ok(await isMember(acme.id, owner.email), 'the last owner stays');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();

    await signInToPanel(page, web.url, ownerOfBravo);
    await page.getByRole('link', { name: 'Members', exact: true }).click();
    await page.getByLabel('Email', { exact: true }).fill(invitee.email);
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    await page.getByRole('status').getByText(`${invitee.email} was invited as viewer`).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();

    // The invitee: no instance yet, two invitations.
    await page.getByLabel('Email', { exact: true }).fill(invitee.email);
    await page.getByLabel('Password', { exact: true }).fill(invitee.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'No instance yet' }).waitFor();
    t.ok(await shown(page.getByRole('cell', { name: 'Acme newsletters', exact: true })), 'the invitation to Acme is listed');
    t.ok(await shown(page.getByRole('cell', { name: 'Bravo shop', exact: true })), 'and the one to Bravo');
    await assertAxeClean(t, page, 'no instance yet, with invitations');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-invitations.png'), fullPage: true });

    await page.getByRole('button', { name: 'Decline the invitation to Bravo shop' }).click();
    await page.getByRole('status').getByText('You declined the invitation to Bravo shop').waitFor();
    t.notOk(await isMember(bravo.id, invitee.email), 'declined: not a member of Bravo');
    t.equal(await page.getByRole('cell', { name: 'Bravo shop', exact: true }).count(), 0, 'the declined one is gone');

    await page.getByRole('button', { name: 'Accept the invitation to Acme newsletters' }).click();
    await page.getByRole('heading', { name: 'Instances', exact: true }).waitFor();
    await page.getByRole('status').getByText('You are now a member of Acme newsletters (admin)').waitFor();
    t.ok(await isMember(acme.id, invitee.email), 'accepted: a member of Acme');
    t.ok(await shown(page.getByRole('row', { name: /Acme newsletters .* admin/ })), 'listed among its instances with the role offered');
    t.equal(await page.getByLabel('Instance', { exact: true }).inputValue(), acme.slug, 'and working in it');
    await assertAxeClean(t, page, 'instances after accepting');

    // It leaves: at once, back to no instance.
    await openFromMenu(page, 'Members', 'Members of Acme newsletters');
    await assertAxeClean(t, page, 'members (admin, with Leave)');
    await page.getByRole('button', { name: 'Leave Acme newsletters' }).click();
    await page.getByRole('heading', { name: 'No instance yet' }).waitFor();
    await page.getByRole('status').getByText('You left Acme newsletters').waitFor();
    t.notOk(await isMember(acme.id, invitee.email), 'left (read from Postgres)');

    // The last owner's refused Leave is the one expected console error (the browser logs a refused fetch).
    assertStayedHome(t, { requests, complaints, origin }, /status of 409/);
    await context.close();
  });
}
