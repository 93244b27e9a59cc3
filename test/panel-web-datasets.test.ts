import { writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { assertAxeClean, assertStayedHome, downloaded, openPanelAs, SCREENSHOTS, shown, useChromium } from './helpers/chromium.js';

import { panelWebBench } from './helpers/panel.js';

/**
 * The Fields, Datasets and CSV lists pages in Chromium (issue 31, docs/panel.md "Datasets,
 * fields and imports"), against the real web app and Postgres: an admin creates a field and a
 * dataset declaring it, imports a 10,000-row CSV from a file input with a column mapped by a
 * select, watches the progress bar's aria-valuenow reach 100, reads the summary, downloads the
 * rejects file, searches a contact, uploads a 10,000-row file to a CSV list (its bar to 100, its
 * summary, its rejects file); a viewer sees the pages with no write control. Each fact
 * checked through the API; axe on every view; screenshots artifacts/screenshots/panel-datasets*.png.
 */

const { pool, web, acme, users } = await panelWebBench(t, 'panelwebdatasets', { name: 'Acme shop' }, ['admin', 'viewer']);
const { admin, viewer } = users;

const dir = await mkdtemp(join(tmpdir(), 'panel-web-datasets-'));
const csvPath = join(dir, 'customers.csv');
const rows = ['email,town,note'];
for (let i = 0; i < 10_000; i++) rows.push(i % 2500 === 3 ? `broken-${i},-cmd,x` : `buyer${i}@example.org,${i % 3 ? 'Lima' : 'Quito'},x`);
await writeFile(csvPath, rows.join('\n') + '\n');
// A list's file: a header, then 10,000 addresses of which three are not (the first looks like a formula).
const vipPath = join(dir, 'vip.csv');
const vip = ['email'];
for (let i = 0; i < 10_000; i++) vip.push(i === 3 ? '=not-an-address' : i % 5000 === 7 ? `nobody-${i}` : `vip${i}@example.org`);
await writeFile(vipPath, vip.join('\n') + '\n');

const chromium = useChromium(t, 'the panel datasets pages in a browser');
if (chromium) {
  t.test('in Chromium, an admin: a field, a dataset, a 10,000-row import watched to 100 %, its rejects, a contact searched', async (t) => {
    const { context, page, origin, requests, complaints, read } = await openPanelAs(chromium.browser, web.url, admin, acme.slug);

    await page.getByRole('link', { name: 'Fields', exact: true }).click();
    await page.getByLabel(/^Key/).fill('town');
    await page.getByLabel('Name', { exact: true }).fill('Town');
    await page.getByRole('button', { name: 'Create field' }).click();
    t.ok(await shown(page.getByRole('rowheader', { name: 'town' })), 'the field is listed');
    t.match((await read('/v1/private/fields')).data.map((f: { field_key: string }) => f.field_key), ['email', 'phone', 'town'], 'created through the API');
    await assertAxeClean(t, page, 'fields (admin)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-datasets-fields.png'), fullPage: true });

    await page.getByRole('link', { name: 'Datasets', exact: true }).click();
    await page.getByLabel('Dataset name', { exact: true }).fill('Customers');
    await page.getByLabel('Town (town)', { exact: true }).check();
    await page.getByRole('button', { name: 'Create dataset' }).click();
    t.ok(await shown(page.getByRole('heading', { name: 'Dataset Customers' })), "the dataset's page");
    const datasets = (await read('/v1/private/datasets')).data;
    t.equal(datasets.length, 1);
    const id = datasets[0].id as number;
    t.same((await read(`/v1/private/datasets/${id}`)).columns, [{ field_key: 'email', required: true }, { field_key: 'town', required: false }]);
    await assertAxeClean(t, page, 'dataset (admin)');

    await page.getByLabel(/^CSV file/).setInputFiles(csvPath);
    t.ok(await shown(page.getByLabel('Column “note”')), 'a select per column of the header');
    t.equal(await page.getByLabel('Column “town”').inputValue(), 'town', 'a column named like a field maps to it');
    t.equal(await page.getByLabel('Column “note”').inputValue(), '', 'another is skipped');
    const values: number[] = [];
    await page.exposeFunction('seeValue', (v: string) => values.push(Number(v)));
    await page.evaluate(() => {
      const bar = document.querySelector('[role=progressbar]')!;
      new MutationObserver(() => (window as unknown as { seeValue(v: string): void }).seeValue(bar.getAttribute('aria-valuenow')!)).observe(bar, { attributes: true, attributeFilter: ['aria-valuenow'] });
    });
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    const bar = page.getByRole('progressbar', { name: 'Import progress' });
    await bar.and(page.locator('[aria-valuenow="100"]')).waitFor({ timeout: 60_000 });
    t.equal(values.at(-1), 100, `the bar reached 100 (values seen: ${values.join(', ')})`);
    t.ok(await shown(page.getByRole('heading', { name: 'Summary' })), 'the summary');
    const summaryText = await page.locator('.summary dl').innerText();
    t.match(summaryText, /Rows\s+10000/);
    t.match(summaryText, /Accepted\s+9996/);
    t.match(summaryText, /Rejected\s+4/);
    t.equal((await read(`/v1/private/datasets/${id}/records?identifier=buyer42@example.org`)).data[0].values.town, 'Quito', 'imported');
    await assertAxeClean(t, page, 'dataset after an import');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-datasets.png'), fullPage: true });

    const rejects = await downloaded(page, 'Download rejects');
    t.equal(rejects.name, `dataset-${id}-rejects.csv`);
    const saved = rejects.bytes.toString('utf8').trim().split('\n');
    t.equal(saved.length, 5, 'the header and four refused rows');
    t.match(saved[1], /^4,field_value_invalid,email,.*,broken-3,'-cmd,x$/, 'the formula-looking cell guarded');

    await page.getByLabel('Identifier', { exact: true }).fill('buyer42@');
    await page.getByLabel('Match', { exact: true }).selectOption('starts_with');
    await page.getByRole('button', { name: 'Search contacts' }).click();
    t.ok(await shown(page.getByRole('rowheader', { name: 'buyer42@example.org' })), 'found by its prefix');
    t.equal(await page.locator('.results tbody tr').count(), 1);
    await page.getByLabel('Identifier', { exact: true }).fill('');
    await page.getByLabel('Column', { exact: true }).selectOption('town');
    await page.getByLabel('Value', { exact: true }).fill('Quito');
    await page.getByRole('button', { name: 'Search contacts' }).click();
    t.ok(await shown(page.getByRole('caption').filter({ hasText: 'Page 1: 20 contacts' })), 'a page of 20 by column=value');
    await assertAxeClean(t, page, 'dataset search');

    await page.getByRole('link', { name: 'CSV lists', exact: true }).click();
    await page.getByLabel('List name', { exact: true }).fill('VIP');
    await page.getByLabel(/^Columns: field_key/).fill('email:1');
    await page.getByRole('button', { name: 'Create list' }).click();
    t.ok(await shown(page.getByRole('rowheader', { name: 'VIP' })), 'the list');
    await assertAxeClean(t, page, 'lists (admin)');

    // An upload to the list: its progress to 100 %, its summary, its rejects file.
    const listId = ((await read('/v1/private/lists')).data as Array<{ id: number; name: string }>).find((l) => l.name === 'VIP')!.id;
    const upload = page.getByRole('form', { name: 'Upload to VIP' });
    await upload.getByLabel('CSV file', { exact: true }).setInputFiles(vipPath);
    await upload.getByLabel('The first row is a header').check();
    const listValues: number[] = [];
    await page.exposeFunction('seeListValue', (v: string) => listValues.push(Number(v)));
    await page.evaluate(() => {
      const bar = document.querySelector('[role=progressbar][aria-label="Upload progress of VIP"]')!;
      new MutationObserver(() => (window as unknown as { seeListValue(v: string): void }).seeListValue(bar.getAttribute('aria-valuenow')!)).observe(bar, { attributes: true, attributeFilter: ['aria-valuenow'] });
    });
    await upload.getByRole('button', { name: 'Upload to VIP' }).click();
    const listBar = page.getByRole('progressbar', { name: 'Upload progress of VIP' });
    await listBar.and(page.locator('[aria-valuenow="100"]')).waitFor({ timeout: 60_000 });
    t.equal(listValues.at(-1), 100, `the upload's bar reached 100 (values seen: ${listValues.join(', ')})`);
    t.same([...listValues].sort((a, b) => a - b), listValues, 'never going back');
    await page.getByRole('status').getByText('The file was uploaded to VIP: 9997 rows accepted, 3 rejected.').waitFor();
    const listSummary = await page.locator('.summary dl').innerText();
    t.match(listSummary, /Rows\s+10000/);
    t.match(listSummary, /Accepted\s+9997/);
    t.match(listSummary, /Rejected\s+3/);
    t.match(listSummary, /Rows in the list now\s+9997/);
    t.equal((await read(`/v1/private/lists/${listId}`)).rows, 9997, 'the rows are in the list (through the API)');
    t.ok(await shown(page.getByRole('row').filter({ hasText: 'VIP' }).filter({ hasText: '9997 of at most' })), 'the table read again, the summary still shown');
    await assertAxeClean(t, page, 'lists after an upload');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-datasets-lists.png'), fullPage: true });
    const listDownload = await downloaded(page, 'Download rejects');
    t.equal(listDownload.name, `list-${listId}-rejects.csv`);
    const listRejects = listDownload.bytes.toString('utf8').trim().split('\n');
    t.equal(listRejects.length, 4, 'the header and three refused rows');
    t.equal(listRejects[0], 'row,code,field,rule,detail');
    t.match(listRejects[1], /^\d+,field_value_invalid,email,.*,'=not-an-address$/, 'the refused cell, formula-guarded');

    assertStayedHome(t, { requests, complaints, origin }, /status of (404|409|422)/);
    await context.close();
  });

  t.test('in Chromium, a viewer: the pages, no write control', async (t) => {
    const { context, page } = await openPanelAs(chromium.browser, web.url, viewer);
    await page.getByRole('link', { name: 'Fields', exact: true }).click();
    t.ok(await shown(page.getByRole('rowheader', { name: 'town' })));
    t.equal(await page.getByRole('button', { name: /Create field|Deactivate|Delete/ }).count(), 0, 'no field control');
    await assertAxeClean(t, page, 'fields (viewer)');
    await page.getByRole('link', { name: 'Datasets', exact: true }).click();
    await page.getByRole('link', { name: 'Customers' }).click();
    t.ok(await shown(page.getByRole('heading', { name: 'Dataset Customers' })));
    t.equal(await page.getByRole('button', { name: /Deactivate|Save|Import/ }).count(), 0, 'no dataset control');
    t.equal(await page.getByLabel(/^CSV file/).count(), 0, 'no import');
    t.ok(await shown(page.getByRole('button', { name: 'Search contacts' })), 'a viewer searches');
    await assertAxeClean(t, page, 'dataset (viewer)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-datasets-viewer.png'), fullPage: true });
    await page.getByRole('link', { name: 'CSV lists', exact: true }).click();
    t.ok(await shown(page.getByRole('rowheader', { name: 'VIP' })));
    t.equal(await page.getByRole('button', { name: /Create list|Upload|Delete/ }).count(), 0, 'no list control');
    await assertAxeClean(t, page, 'lists (viewer)');
    await context.close();
  });
}
