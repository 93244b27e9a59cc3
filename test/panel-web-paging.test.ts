import { join } from 'node:path';
import t from 'tap';
import { createField } from '../domain/fields/catalog.js';
import { restrict } from '../domain/restrictions/restrictions.js';
import { withTenant, type Tenant } from '../domain/tenancy/context.js';
import { assertAxeClean, openFromMenu, openPanelAs, SCREENSHOTS, settled, useChromium } from './helpers/chromium.js';
import { panelWebBench } from './helpers/panel.js';

/**
 * Listings longer than a page in Chromium (issue 31, docs/panel.md "The web panel": the pager of
 * kit.ts), against the real web app and Postgres: 230 restrictions (three pages of 100; the
 * listing counts no total) paged through to the last row with the keyboard, each page the API's
 * page row for row, the live region saying which rows, the focus kept on the button pressed or
 * given to the table when that button can no longer be used; a change on the last page redraws
 * that page; the page is kept when coming back. A viewer pages the field catalog (103 fields, a
 * listing with its total). axe on the paged views; screenshots panel-paging*.png.
 */

const { pool, web, acme, users } = await panelWebBench(t, 'panelwebpaging', { name: 'Acme shop' }, ['admin', 'viewer']);
const tenant: Tenant = { instanceId: acme.id, slug: acme.slug, tz: acme.tz };
const { admin, viewer } = users;

const RESTRICTIONS = 230;
await withTenant(pool, tenant, async (c) => {
  for (let i = 0; i < RESTRICTIONS; i++) await restrict(tenant, c, `person-${String(i).padStart(3, '0')}@example.org`, 'unsubscribe');
});
// 101 of the instance's own beside the two system fields (email, phone): two pages.
for (let i = 0; i < 101; i++) await createField(tenant, pool, { key: `f${String(i).padStart(3, '0')}`, name: `Field ${i}`, type: 'text' });

const chromium = useChromium(t, 'paging in the panel');
if (chromium) {
  t.test('in Chromium, an admin pages the restrictions to the last row with the keyboard', async (t) => {
    const { context, page, complaints, read } = await openPanelAs(chromium.browser, web.url, admin, acme.slug);
    const apiPage = async (n: number) => ((await read(`/v1/private/restrictions?page_size=100&page=${n}`)) as { data: Array<{ recipient: string }> }).data.map((r) => r.recipient);
    const shownRecipients = () => page.locator('#restrictions-table tbody tr td:first-child').allInnerTexts();
    const focused = (id: string) => settled(page, 'document.activeElement?.id', (v) => v === id);

    await page.getByRole('link', { name: 'Restrictions', exact: true }).click();
    const first = 'Restrictions with the lifted ones, page 1: rows 1 to 100, more on the next page';
    await page.getByRole('table', { name: first }).waitFor();
    t.same(await shownRecipients(), await apiPage(1), "page 1 is the API's first page");
    t.equal(await page.getByRole('button', { name: 'Previous page of restrictions' }).isDisabled(), true, 'no previous page');
    await assertAxeClean(t, page, 'restrictions, page 1 of several');

    const next = page.getByRole('button', { name: 'Next page of restrictions' });
    await next.focus();
    await page.keyboard.press('Enter');
    const second = 'Restrictions with the lifted ones, page 2: rows 101 to 200, more on the next page';
    await page.getByRole('status').getByText(`${second}.`, { exact: true }).waitFor();
    t.ok(await page.getByRole('table', { name: second }).isVisible(), 'the caption says the same');
    t.same(await shownRecipients(), await apiPage(2), "page 2 is the API's second page");
    t.equal(await focused('restrictions-next'), 'restrictions-next', 'the focus stays on Next page');

    await page.keyboard.press('Enter');
    const last = 'Restrictions with the lifted ones, page 3: rows 201 to 230';
    await page.getByRole('status').getByText(`${last}.`, { exact: true }).waitFor();
    const lastPage = await apiPage(3);
    t.equal(lastPage.length, RESTRICTIONS - 200);
    t.same(await shownRecipients(), lastPage, "page 3 is the API's last page, to its last row");
    t.equal(await next.isDisabled(), true, 'no next page');
    t.equal(await focused('restrictions-table'), 'restrictions-table', 'Next page can no longer be used: the table has the focus');
    await assertAxeClean(t, page, 'restrictions, the last page');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-paging-restrictions.png'), fullPage: true });

    // A change on the last page: the page drawn again is that page, the row marked lifted.
    const oldest = lastPage.at(-1)!;
    await page.getByRole('button', { name: `Lift the restriction of ${oldest}` }).click();
    await page.getByRole('status').getByText(`The restriction of ${oldest} was lifted.`).waitFor();
    await page.getByRole('row').filter({ hasText: oldest }).filter({ hasText: 'lifted' }).waitFor();
    t.ok(await page.getByRole('table', { name: last }).isVisible(), 'still page 3 after the redraw');

    // Elsewhere and back: the page is kept while the panel is open.
    await openFromMenu(page, 'Senders', 'Senders of Acme shop');
    await page.getByRole('link', { name: 'Restrictions', exact: true }).click();
    await page.getByRole('table', { name: last }).waitFor();
    t.pass('coming back shows page 3 again');

    const previous = page.getByRole('button', { name: 'Previous page of restrictions' });
    await previous.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText(`${second}.`, { exact: true }).waitFor();
    t.equal(await focused('restrictions-previous'), 'restrictions-previous', 'the focus stays on Previous page');
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText(`${first}.`, { exact: true }).waitFor();
    t.equal(await focused('restrictions-table'), 'restrictions-table', 'back on page 1: the table has the focus');
    t.same(await shownRecipients(), await apiPage(1));
    t.same(complaints, [], 'no console error');
    await context.close();
  });

  t.test('in Chromium, a viewer pages the field catalog (a listing with its total)', async (t) => {
    const { context, page, complaints, read } = await openPanelAs(chromium.browser, web.url, viewer, acme.slug);
    const apiPage = async (n: number) => ((await read(`/v1/private/fields?page_size=100&page=${n}`)) as { data: Array<{ field_key: string }> }).data.map((f) => f.field_key);
    const shownKeys = () => page.locator('#fields-table tbody th').allInnerTexts();
    await page.getByRole('link', { name: 'Fields', exact: true }).click();
    await page.getByRole('table', { name: 'Fields, page 1 of 2: rows 1 to 100 of 103, more on the next page' }).waitFor();
    t.same(await shownKeys(), await apiPage(1), "page 1 is the API's");
    await page.getByRole('button', { name: 'Next page of fields' }).click();
    await page.getByRole('status').getByText('Fields, page 2 of 2: rows 101 to 103 of 103.', { exact: true }).waitFor();
    const lastPage = await apiPage(2);
    t.same(await shownKeys(), lastPage, "page 2 is the API's, to its last row");
    t.equal(lastPage.at(-1), 'f100', 'the last field created is the last row');
    t.equal(await page.getByRole('button', { name: /Deactivate|Delete|Create field/ }).count(), 0, 'still no control but the pages');
    await assertAxeClean(t, page, 'fields, the last page (viewer)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-paging-fields.png'), fullPage: true });
    t.same(complaints, [], 'no console error');
    await context.close();
  });
}
