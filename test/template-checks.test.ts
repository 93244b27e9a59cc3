import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { checkCssSupport, checkDocument, checkHtmlSize, sortFindings } from '../engines/beefree/check/index.js';
import { compactHtml } from '../engines/beefree/check/html-output.js';
import { processDocument, type Finding } from '../engines/beefree/document.js';
import { formatDescription } from '../engines/beefree/format/description.js';
import { GMAIL_CLIP_BYTES, MAX_CONFIG_BYTES, MAX_HTML_BYTES } from '../engines/beefree/format/limits.js';
import { RULES } from '../engines/beefree/format/rules.js';
import { corpusPath } from './helpers/corpus.js';

/**
 * The document checks (engines/beefree/check/, run by processDocument): each rule on a small
 * hand-made document, with the finding's level, rule, uuid (the node's or its nearest
 * ancestor's) and JSON Pointer; the real Beefree documents of the shared corpus pass without
 * errors and get the warnings their quirks call for.
 */

const CORPUS = corpusPath('templates', 'beefree');
const META = { subject: 'Subject', preheader: 'Preheader' };
const T = 'mailup-bee-newsletter-modules-';

type Json = Record<string, any>;

/** A document of one row (uuid r1) with one column (uuid c1) holding these modules. */
function doc(modules: Json[], extra: { row?: Json; column?: Json; body?: Json } = {}): Json {
  return {
    page: {
      title: 't',
      ...(extra.body ? { body: extra.body } : {}),
      rows: [{ uuid: 'r1', ...extra.row, columns: [{ uuid: 'c1', 'grid-columns': 12, ...extra.column, modules }] }],
    },
  };
}

const paragraph = (uuid: string, html: string, style: Json = {}): Json => ({ uuid, type: `${T}paragraph`, descriptor: { paragraph: { html, style } } });
const button = (uuid: string, href: unknown, label = 'Go', style: Json = {}): Json => ({ uuid, type: `${T}button`, descriptor: { button: { label, href, style } } });
const image = (uuid: string, image: Json): Json => ({ uuid, type: `${T}image`, descriptor: { image } });

const brief = (f: Finding) => ({ level: f.level, rule: f.rule, uuid: f.uuid, pointer: f.pointer, ...(f.code ? { code: f.code } : {}) });

async function errorsOf(d: unknown) {
  const r = await processDocument(d, META);
  return r.errors.map(brief);
}

/** The findings (of one rule), for a document that must have no error. */
async function findingsOf(d: unknown, rule?: string) {
  const r = await processDocument(d, META);
  if (r.errors.length > 0) throw new Error(`unexpected errors: ${JSON.stringify(r.errors)}`);
  return r.findings.filter((f) => rule === undefined || f.rule === rule).map(brief);
}

const M = '/page/rows/0/columns/0/modules';

t.test('invalid_type: a node or field of the wrong JSON type, at its pointer with the nearest uuid', async (t) => {
  t.same(await errorsOf({ page: { rows: {} } }), [{ level: 'error', rule: 'invalid_type', uuid: null, pointer: '/page/rows', code: 'invalid_document' }], 'rows not an array');
  t.same(await errorsOf([]), [{ level: 'error', rule: 'invalid_type', uuid: null, pointer: '', code: 'invalid_document' }], 'the document not an object');
  t.same(
    await errorsOf(doc([{ uuid: 'm1', type: `${T}paragraph`, descriptor: 'text' }])),
    [{ level: 'error', rule: 'invalid_type', uuid: 'm1', pointer: `${M}/0/descriptor`, code: 'invalid_document' }],
    'a descriptor that is not an object',
  );
  t.same(
    await errorsOf(doc([{ uuid: 'm1', type: `${T}paragraph`, descriptor: { paragraph: [] } }])),
    [{ level: 'error', rule: 'invalid_type', uuid: 'm1', pointer: `${M}/0/descriptor/paragraph`, code: 'invalid_document' }],
    'the content not an object',
  );
  t.same(
    await errorsOf(doc([paragraph('m1', 12 as unknown as string)])),
    [{ level: 'error', rule: 'invalid_type', uuid: 'm1', pointer: `${M}/0/descriptor/paragraph/html`, code: 'invalid_document' }],
    'a text that is a number',
  );
  const colModules = doc([]);
  colModules.page.rows[0].columns[0].modules = { a: 1 };
  t.same(await errorsOf(colModules), [{ level: 'error', rule: 'invalid_type', uuid: 'c1', pointer: '/page/rows/0/columns/0/modules', code: 'invalid_document' }], 'modules not an array: the column uuid');
  t.same(
    await errorsOf(doc([], { column: { 'grid-columns': '6' } })),
    [{ level: 'error', rule: 'invalid_type', uuid: 'c1', pointer: '/page/rows/0/columns/0/grid-columns', code: 'invalid_document' }],
    'grid-columns a string',
  );
  t.same(
    await errorsOf(doc([], { row: { content: { computedStyle: { rowColStackOnMobile: 'no' } } } })),
    [{ level: 'error', rule: 'invalid_type', uuid: 'r1', pointer: '/page/rows/0/content/computedStyle/rowColStackOnMobile', code: 'invalid_document' }],
  );
  t.same(
    await errorsOf(doc([{ uuid: 'm1', type: `${T}social`, descriptor: { iconsList: { icons: [{ image: { href: 5 } }] } } }])),
    [{ level: 'error', rule: 'invalid_type', uuid: 'm1', pointer: `${M}/0/descriptor/iconsList/icons/0/image/href`, code: 'invalid_document' }],
    'deep inside a descriptor',
  );
  const r = await processDocument({ page: { rows: {} } }, META);
  t.same(r.errors[0].params, { expected: ['array'], actual: 'object' });
  t.equal(r.html, null, 'a document with errors is not rendered');
  t.equal(r.text, null);
});

t.test('missing_field: page, rows, columns, modules, type, descriptor', async (t) => {
  t.same(await errorsOf({}), [{ level: 'error', rule: 'missing_field', uuid: null, pointer: '/page', code: 'invalid_document' }]);
  t.same(await errorsOf({ page: {} }), [{ level: 'error', rule: 'missing_field', uuid: null, pointer: '/page/rows', code: 'invalid_document' }]);
  t.same(await errorsOf(doc([{ uuid: 'm1', descriptor: {} }])), [{ level: 'error', rule: 'missing_field', uuid: 'm1', pointer: `${M}/0/type`, code: 'invalid_document' }]);
  t.same(await errorsOf(doc([{ uuid: 'm1', type: `${T}divider` }])), [{ level: 'error', rule: 'missing_field', uuid: 'm1', pointer: `${M}/0/descriptor`, code: 'invalid_document' }]);
  t.same(await errorsOf({ page: { rows: [{ uuid: 'r9', columns: [{}] }] } }), [{ level: 'error', rule: 'missing_field', uuid: 'r9', pointer: '/page/rows/0/columns/0/modules', code: 'invalid_document' }]);
});

t.test('null in an optional field is absent; unknown keys anywhere are accepted and ignored', async (t) => {
  const d = doc([paragraph('m1', '<p>Hi</p>', { color: null, 'font-size': null })], { row: { content: null, metadata: { a: 1 }, synced: true }, column: { style: null, comments: ['x'] } });
  d.comments = { thread: 1 };
  d.page.translations = { es: {} };
  d.page.rows[0].columns[0].modules[0].descriptor.mobileStyle = { 'font-size': '20px' };
  d.page.rows[0].columns[0].modules[0].descriptor.paragraph.translations = { es: { html: '<p>Hola</p>' } };
  const r = await processDocument(d, META);
  t.same(r.errors, []);
  t.same(r.findings.filter((f) => f.level === 'warning'), []);
  t.match(r.html, /Hi/);
});

t.test('module_type_invalid: not the published form, or an unknown kind', async (t) => {
  for (const type of ['cartero-modules-paragraph', 'paragraph', 'mailup-bee-newsletter-modules-Paragraph', 'mailup-bee-newsletter-modules-', 'mailup-bee-newsletter-modules-sparkles']) {
    t.same(
      await errorsOf(doc([{ uuid: 'm1', type, descriptor: {} }])),
      [{ level: 'error', rule: 'module_type_invalid', uuid: 'm1', pointer: `${M}/0/type`, code: 'invalid_document' }],
      type,
    );
  }
  t.same(await errorsOf(doc([{ uuid: 'm1', type: `${T}empty`, descriptor: {} }])), [], "the editor's empty placeholder is accepted");
});

t.test('essential_not_supported: Beefree kinds Cartero does not render, named in params.kinds', async (t) => {
  const r = await processDocument(
    doc([
      { uuid: 'f1', type: `${T}form`, descriptor: { form: {} } },
      paragraph('m1', '<p>x</p>'),
      { uuid: 'k1', type: `${T}carousel`, descriptor: {} },
      { uuid: 'f2', type: `${T}form`, descriptor: {} },
    ]),
    META,
  );
  t.same(r.errors.map(brief), [
    { level: 'error', rule: 'module_not_supported', uuid: 'f1', pointer: `${M}/0/type`, code: 'essential_not_supported' },
    { level: 'error', rule: 'module_not_supported', uuid: 'k1', pointer: `${M}/2/type`, code: 'essential_not_supported' },
    { level: 'error', rule: 'module_not_supported', uuid: 'f2', pointer: `${M}/3/type`, code: 'essential_not_supported' },
  ]);
  for (const e of r.errors) t.same(e.params, { kinds: ['form', 'carousel'] });
  for (const k of ['merge-content', 'addon']) t.equal((await errorsOf(doc([{ uuid: 'x', type: `${T}${k}`, descriptor: {} }])))[0]?.code, 'essential_not_supported', k);
});

t.test('unsafe_link: javascript:, vbscript: and data: in link fields and inside HTML; merge tags are fine', async (t) => {
  const err = (uuid: string, pointer: string) => ({ level: 'error', rule: 'unsafe_link', uuid, pointer, code: 'invalid_document' });
  t.same(await errorsOf(doc([button('b1', 'javascript:alert(1)')])), [err('b1', `${M}/0/descriptor/button/href`)], 'button href');
  t.same(await errorsOf(doc([button('b1', '  JaVaScRiPt:alert(1)')])), [err('b1', `${M}/0/descriptor/button/href`)], 'case and leading spaces');
  t.same(await errorsOf(doc([image('i1', { src: 'data:image/png;base64,AAAA', alt: 'a', width: '10px' })])), [err('i1', `${M}/0/descriptor/image/src`)], 'image src');
  t.same(await errorsOf(doc([image('i1', { src: 'https://x.test/a.png', href: 'vbscript:x', alt: 'a', width: '10px' })])), [err('i1', `${M}/0/descriptor/image/href`)], 'image href');
  t.same(
    await errorsOf(doc([paragraph('p1', '<p><a href="java&#x09;script:alert(1)">x</a> <a href="https://ok.test">ok</a></p>')])),
    [err('p1', `${M}/0/descriptor/paragraph/html`)],
    'inside a paragraph, an entity-encoded tab in the scheme',
  );
  t.same(await errorsOf(doc([{ uuid: 'h1', type: `${T}heading`, descriptor: { heading: { text: "<a href='data:text/html,x'>t</a>" } } }])), [err('h1', `${M}/0/descriptor/heading/text`)], 'heading text');
  t.same(await errorsOf(doc([button('b1', 'https://ok.test', '<span><a href="javascript:x">Go</a></span>')])), [err('b1', `${M}/0/descriptor/button/label`)], 'button label');
  t.same(await errorsOf(doc([{ uuid: 'l1', type: `${T}list`, descriptor: { list: { html: '<ul><li><img src="data:image/gif;base64,R0">x</li></ul>' } } }])), [err('l1', `${M}/0/descriptor/list/html`)], 'list html');
  t.same(await errorsOf(doc([{ uuid: 't1', type: `${T}text`, descriptor: { text: { html: '<a href=javascript:x>t</a>' } } }])), [err('t1', `${M}/0/descriptor/text/html`)], 'legacy text html, unquoted');
  t.same(await errorsOf(doc([{ uuid: 'x1', type: `${T}html`, descriptor: { html: { html: '<!--[if mso]><a href="javascript:x">o</a><![endif]-->' } } }])), [err('x1', `${M}/0/descriptor/html/html`)], 'html module, inside an Outlook conditional comment');
  t.same(
    await errorsOf(doc([{ uuid: 'p9', type: `${T}paragraph`, descriptor: { text: { text: '<a href="javascript:x">old</a>' } } }])),
    [err('p9', `${M}/0/descriptor/text/text`)],
    'a paragraph whose content sits under the older `text` key, its html under `text`',
  );
  t.same(await errorsOf(doc([{ uuid: 'm1', type: `${T}menu`, descriptor: { menuItemsList: { items: [{ text: 'a', link: { href: 'javascript:x' } }] } } }])), [err('m1', `${M}/0/descriptor/menuItemsList/items/0/link/href`)], 'menu item');
  const e = (await processDocument(doc([button('b1', 'javascript:alert(1)')]), META)).errors[0];
  t.same(e.params, { scheme: 'javascript' });

  // Merge tags and ordinary schemes are fine.
  const fine = doc([
    button('b1', '{{unsubscribe_url}}'),
    button('b2', '*|UNSUB|*'),
    button('b3', 'mailto:a@b.test'),
    button('b4', 'tel:+34911222333'),
    button('b5', '{% if vip %}https://vip.test{% endif %}'),
    paragraph('p1', '<p><a href="{{ link | default: \'https://x.test\' }}">x</a> <a href="[unsubscribe]">u</a> <a href="#top">top</a></p>'),
  ]);
  const r = await processDocument(fine, META);
  t.same(r.errors, []);
  t.same(r.findings.filter((f) => f.rule.startsWith('link') || f.rule === 'unsafe_link').map(brief), [], 'no link findings for merge tags, mailto, tel, anchors');
});

t.test('document_too_large: over 262144 bytes of JSON, the only error', async (t) => {
  const big = doc([paragraph('p1', `<p>${'x'.repeat(MAX_CONFIG_BYTES)}</p>`), button('b1', 'javascript:x')]);
  const r = await processDocument(big, META);
  t.same(r.errors.map(brief), [{ level: 'error', rule: 'document_too_large', uuid: null, pointer: '', code: 'invalid_document' }]);
  t.equal(r.errors[0].params?.max_bytes, MAX_CONFIG_BYTES);
  t.equal(r.html, null);
  // Just under the limit is fine.
  const base = JSON.stringify(doc([paragraph('p1', '<p></p>')])).length;
  const fits = doc([paragraph('p1', `<p>${'y'.repeat(MAX_CONFIG_BYTES - base)}</p>`)]);
  t.equal(Buffer.byteLength(JSON.stringify(fits)), MAX_CONFIG_BYTES);
  t.same(checkDocument(fits).filter((f) => f.rule === 'document_too_large'), []);
});

t.test('template_html_too_large: generated HTML over 512 KB', async (t) => {
  t.equal(MAX_HTML_BYTES, 524288);
  t.ok(MAX_HTML_BYTES > GMAIL_CLIP_BYTES * 4, 'well above the clipping point');
  // 320 empty rows: a small document whose HTML is over the maximum, though its floor
  // (check/html-estimate.ts) is not, so it is rendered and measured.
  const rows = Array.from({ length: 320 }, (_, i) => ({ uuid: `r${i}`, columns: [{ 'grid-columns': 12, modules: [] }] }));
  const r = await processDocument({ page: { rows } }, META);
  t.same(r.errors.map(brief), [{ level: 'error', rule: 'html_too_large', uuid: null, pointer: '', code: 'template_html_too_large' }]);
  t.equal(r.errors[0].params?.max_bytes, MAX_HTML_BYTES);
  t.ok((r.errors[0].params?.bytes as number) > MAX_HTML_BYTES);
  t.equal(r.html, null, 'an HTML over the maximum is not returned');
  // 400: the floor is over the maximum, refused before anything else (html_estimate_too_large).
  const more = Array.from({ length: 400 }, (_, i) => ({ uuid: `r${i}`, columns: [{ 'grid-columns': 12, modules: [] }] }));
  const estimated = await processDocument({ page: { rows: more } }, META);
  t.same(estimated.errors.map(brief), [{ level: 'error', rule: 'html_estimate_too_large', uuid: null, pointer: '/page/rows', code: 'template_html_too_large' }]);
  t.match(estimated.errors[0].params, { estimated_min_bytes: 601_400, max_bytes: MAX_HTML_BYTES, rows: 400, columns: 400, modules: 0 });
  // The size check itself, at the boundaries (UTF-8 bytes, not characters).
  t.same(checkHtmlSize('a'.repeat(MAX_HTML_BYTES)).map((f) => f.rule), ['html_gmail_clipping']);
  t.same(checkHtmlSize('a'.repeat(MAX_HTML_BYTES + 1)).map((f) => f.rule), ['html_too_large']);
  t.same(checkHtmlSize('é'.repeat(MAX_HTML_BYTES / 2 + 1)).map((f) => f.rule), ['html_too_large']);
});

t.test('html_gmail_clipping: a warning over 102 KB', async (t) => {
  t.same(checkHtmlSize('a'.repeat(GMAIL_CLIP_BYTES)), []);
  t.same(checkHtmlSize('a'.repeat(GMAIL_CLIP_BYTES + 1)).map(brief), [{ level: 'warning', rule: 'html_gmail_clipping', uuid: null, pointer: '' }]);
  const rows = Array.from({ length: 80 }, (_, i) => ({ uuid: `r${i}`, columns: [{ 'grid-columns': 12, modules: [] }] }));
  const r = await processDocument({ page: { rows } }, META);
  t.same(r.errors, []);
  t.ok(Buffer.byteLength(r.html!) > GMAIL_CLIP_BYTES);
  t.same(r.findings.filter((f) => f.rule === 'html_gmail_clipping').length, 1);
});

t.test('image_missing_alt and image_missing_width', async (t) => {
  t.same(await findingsOf(doc([image('i1', { src: 'https://x.test/a.png', width: '100px' })]), 'image_missing_alt'), [
    { level: 'warning', rule: 'image_missing_alt', uuid: 'i1', pointer: `${M}/0/descriptor/image/alt` },
  ]);
  t.same((await findingsOf(doc([image('i1', { src: 'https://x.test/a.png', alt: '  ', width: '100px' })]), 'image_missing_alt')).length, 1, 'blank alt');
  t.same(await findingsOf(doc([image('i1', { src: 'https://x.test/a.png', alt: 'A cat', width: '100px' })]), 'image_missing_alt'), []);
  const social = { uuid: 's1', type: `${T}social`, descriptor: { iconsList: { icons: [{ name: 'x', image: { src: 'https://x.test/x.png', href: 'https://x.test' } }] } } };
  t.same(await findingsOf(doc([social]), 'image_missing_alt'), [{ level: 'warning', rule: 'image_missing_alt', uuid: 's1', pointer: `${M}/0/descriptor/iconsList/icons/0/image/alt` }]);
  t.same(await findingsOf(doc([image('i1', { src: 'https://x.test/a.png', alt: 'a' })]), 'image_missing_width'), [
    { level: 'suggestion', rule: 'image_missing_width', uuid: 'i1', pointer: `${M}/0/descriptor/image` },
  ]);
  const withComputed = image('i1', { src: 'https://x.test/a.png', alt: 'a' });
  withComputed.descriptor.computedStyle = { width: 338 };
  t.same(await findingsOf(doc([withComputed]), 'image_missing_width'), [], "the editor's computed width counts");
});

t.test('link_missing: button, social icon and menu item without a link', async (t) => {
  t.same(await findingsOf(doc([button('b1', '')]), 'link_missing'), [{ level: 'warning', rule: 'link_missing', uuid: 'b1', pointer: `${M}/0/descriptor/button/href` }]);
  t.same((await findingsOf(doc([{ uuid: 'b1', type: `${T}button`, descriptor: { button: { label: 'x' } } }]), 'link_missing')).length, 1, 'absent href');
  t.same((await findingsOf(doc([button('b1', '#')]), 'link_missing')).length, 1, '# goes nowhere');
  t.same(await findingsOf(doc([button('b1', 'https://x.test')]), 'link_missing'), []);
  const social = { uuid: 's1', type: `${T}social`, descriptor: { iconsList: { icons: [{ image: { src: 'https://x.test/x.png', alt: 'x', href: '' } }] } } };
  t.same(await findingsOf(doc([social]), 'link_missing'), [{ level: 'warning', rule: 'link_missing', uuid: 's1', pointer: `${M}/0/descriptor/iconsList/icons/0/image/href` }]);
  const menu = { uuid: 'n1', type: `${T}menu`, descriptor: { menuItemsList: { items: [{ text: 'a', link: { href: 'https://x.test' } }, { text: 'b', link: {} }] } } };
  t.same(await findingsOf(doc([menu]), 'link_missing'), [{ level: 'warning', rule: 'link_missing', uuid: 'n1', pointer: `${M}/0/descriptor/menuItemsList/items/1/link/href` }]);
});

t.test('duplicate_uuid: a warning at the repeat, never a rejection', async (t) => {
  const d = {
    page: {
      rows: [
        { uuid: 'r1', columns: [{ uuid: 'c1', 'grid-columns': 12, modules: [paragraph('m1', '<p>a</p>')] }] },
        { uuid: 'r2', columns: [{ uuid: 'c1', 'grid-columns': 12, modules: [paragraph('m1', '<p>b</p>'), paragraph('m1', '<p>c</p>')] }] },
      ],
    },
  };
  t.same(await findingsOf(d, 'duplicate_uuid'), [
    { level: 'warning', rule: 'duplicate_uuid', uuid: 'c1', pointer: '/page/rows/1/columns/0/uuid' },
    { level: 'warning', rule: 'duplicate_uuid', uuid: 'm1', pointer: '/page/rows/1/columns/0/modules/0/uuid' },
    { level: 'warning', rule: 'duplicate_uuid', uuid: 'm1', pointer: '/page/rows/1/columns/0/modules/1/uuid' },
  ]);
});

t.test('grid_columns_sum and grid_columns_missing', async (t) => {
  const row = (...shares: Array<number | undefined>) => ({
    page: { rows: [{ uuid: 'r1', columns: shares.map((g, i) => ({ uuid: `c${i}`, ...(g === undefined ? {} : { 'grid-columns': g }), modules: [] })) }] },
  });
  t.same(await findingsOf(row(6, 6), 'grid_columns_sum'), []);
  t.same(await findingsOf(row(3, 4, 5)), [], '3+4+5');
  t.same(await findingsOf(row(12, 12), 'grid_columns_sum'), [{ level: 'warning', rule: 'grid_columns_sum', uuid: 'r1', pointer: '/page/rows/0/columns' }]);
  t.same((await processDocument(row(4, 4), META)).findings.find((f) => f.rule === 'grid_columns_sum')?.params, { sum: 8 });
  t.same(await findingsOf(row(6, undefined), 'grid_columns_missing'), [{ level: 'warning', rule: 'grid_columns_missing', uuid: 'c1', pointer: '/page/rows/0/columns/1' }]);
});

t.test('low_contrast: text against the nearest opaque background, WCAG AA', async (t) => {
  // #777777 on white: 4.48:1, just under 4.5.
  t.same(await findingsOf(doc([paragraph('p1', '<p>x</p>', { color: '#777777' })]), 'low_contrast'), [
    { level: 'warning', rule: 'low_contrast', uuid: 'p1', pointer: `${M}/0/descriptor/paragraph/style/color` },
  ]);
  t.same(await findingsOf(doc([paragraph('p1', '<p>x</p>', { color: '#767676' })]), 'low_contrast'), [], '#767676 passes (4.54:1)');
  t.same(await findingsOf(doc([paragraph('p1', '<p>x</p>', { color: '#777777', 'font-size': '24px' })]), 'low_contrast'), [], 'large text needs 3:1');
  // The column's background is nearer than the row's.
  t.same(await findingsOf(doc([paragraph('p1', '<p>x</p>', { color: '#FFFFFF' })], { column: { style: { 'background-color': '#000000' } }, row: { content: { style: { 'background-color': '#FFFFFF' } } } }), 'low_contrast'), []);
  t.same(
    await findingsOf(doc([paragraph('p1', '<p>x</p>', { color: '#FFFFFF' })], { column: { style: { 'background-color': 'transparent' } }, row: { content: { style: { 'background-color': '#EEEEEE' } } } }), 'low_contrast').then((f) => f.length),
    1,
    'transparent column: the row content behind it',
  );
  // Inherited text colour (the row's), message background from the body.
  const inherited = doc([paragraph('p1', '<p>x</p>')], {
    row: { content: { style: { color: '#333333' } } },
    body: { content: { style: { color: '#000000' }, computedStyle: { messageBackgroundColor: '#222222' } } },
  });
  t.same(await findingsOf(inherited, 'low_contrast'), [{ level: 'warning', rule: 'low_contrast', uuid: 'p1', pointer: `${M}/0` }]);
  // A button: its label colour against its own background.
  t.same(await findingsOf(doc([button('b1', 'https://x.test', 'Go', { color: '#FFFFFF', 'background-color': '#3AAEE0' })]), 'low_contrast').then((f) => f.length), 1);
  t.same(await findingsOf(doc([button('b1', 'https://x.test', 'Go', { color: '#FFFFFF', 'background-color': '#0068A5' })]), 'low_contrast'), []);
  // A background image in the way: not judged.
  t.same(await findingsOf(doc([paragraph('p1', '<p>x</p>', { color: '#FFFFFF' })], { row: { content: { style: { 'background-image': "url('https://x.test/bg.png')" } } } }), 'low_contrast'), []);
  const r = await processDocument(doc([paragraph('p1', '<p>x</p>', { color: 'rgb(119, 119, 119)' })]), META);
  t.same(r.findings.find((f) => f.rule === 'low_contrast')?.params, { text: '#777777', background: '#FFFFFF', ratio: 4.47, minimum: 4.5 });
});

t.test('html_module_script: <script> and event handlers in an html module', async (t) => {
  const html = (uuid: string, h: string) => ({ uuid, type: `${T}html`, descriptor: { html: { html: h } } });
  t.same(await findingsOf(doc([html('x1', '<div><script>alert(1)</script>hi</div>')]), 'html_module_script'), [
    { level: 'warning', rule: 'html_module_script', uuid: 'x1', pointer: `${M}/0/descriptor/html/html` },
  ]);
  const r = await processDocument(doc([html('x1', '<img src="https://x.test/a.png" alt="a" onerror="steal()"><a href="https://x.test" onClick="x()">a</a>')]), META);
  t.same(r.findings.find((f) => f.rule === 'html_module_script')?.params, { scripts: 0, handlers: ['onerror', 'onclick'] });
  t.same(await findingsOf(doc([html('x1', '<div class="on">online</div>')]), 'html_module_script'), []);
});

t.test('css_vendor_prefix: -webkit-center and the like', async (t) => {
  t.same(await findingsOf(doc([paragraph('p1', '<p>x</p>', { 'text-align': '-webkit-center' })]), 'css_vendor_prefix'), [
    { level: 'warning', rule: 'css_vendor_prefix', uuid: 'p1', pointer: `${M}/0/descriptor/paragraph/style/text-align` },
  ]);
  const b = button('b1', 'https://x.test');
  b.descriptor.style = { 'text-align': '-moz-right' };
  t.same((await processDocument(doc([b]), META)).findings.find((f) => f.rule === 'css_vendor_prefix')?.params, { value: '-moz-right', normalised: 'right' });
});

t.test('suggestions: subject, preheader, scheme-less links, CSS clients do not support', async (t) => {
  const none = await processDocument(doc([paragraph('p1', '<p>x</p>')]), { subject: '', preheader: null });
  t.same(
    none.findings.filter((f) => f.rule.endsWith('_missing')).map((f) => [f.level, f.rule, f.uuid, f.pointer, f.params]),
    [
      ['suggestion', 'subject_missing', null, '', { field: 'subject' }],
      ['suggestion', 'preheader_missing', null, '', { field: 'preheader' }],
    ],
  );
  const nullConfig = await processDocument(null, { subject: null, preheader: 'p' });
  t.same(nullConfig, { errors: [], findings: [nullConfig.findings[0]], html: null, text: null, checkFailures: [] }, 'null config: no errors, no html');
  t.equal(nullConfig.findings[0].rule, 'subject_missing');

  t.same(await findingsOf(doc([button('b1', 'www.example.com/offer')]), 'link_without_scheme'), [
    { level: 'suggestion', rule: 'link_without_scheme', uuid: 'b1', pointer: `${M}/0/descriptor/button/href` },
  ]);
  t.same(await findingsOf(doc([paragraph('p1', '<p><a href="example.com">x</a></p>')]), 'link_without_scheme'), [
    { level: 'suggestion', rule: 'link_without_scheme', uuid: 'p1', pointer: `${M}/0/descriptor/paragraph/html` },
  ]);
  t.same(await findingsOf(doc([paragraph('p1', '<p><a href="/relative/path">x</a><a href="https://www.x.test">y</a></p>')]), 'link_without_scheme'), []);
  t.same(await findingsOf(doc([paragraph('p1', '<p><a href="shop.example.co.uk/offer?x=1">x</a><img src="logo.png" alt="l"><a href="page.html">y</a></p>')]), 'link_without_scheme'), [
    { level: 'suggestion', rule: 'link_without_scheme', uuid: 'p1', pointer: `${M}/0/descriptor/paragraph/html` },
  ], 'a host name is suggested; file names are relative paths');

  // Rounded corners on two buttons: one suggestion for the feature, naming the clients.
  const css = await findingsOf(
    doc([button('b1', 'https://x.test', 'Go', { 'border-radius': '8px' }), button('b2', 'https://y.test', 'Go', { 'border-radius': '12px' })]),
    'css_client_support',
  );
  t.same(css, [{ level: 'suggestion', rule: 'css_client_support', uuid: null, pointer: '' }]);
  const r = await processDocument(doc([button('b1', 'https://x.test', 'Go', { 'border-radius': '8px' })]), META);
  t.same(r.findings.find((f) => f.rule === 'css_client_support')?.params, { feature: 'border-radius', clients: ['outlook.windows', 'outlook.windows-mail'] });
  // Square corners (0px) are not reported: a client ignoring them renders the same.
  t.same(await findingsOf(doc([button('b1', 'https://x.test', 'Go', { 'border-radius': '0px' })]), 'css_client_support'), []);
  // An html module's own CSS is the designer's doing.
  const flex = await processDocument(doc([{ uuid: 'x1', type: `${T}html`, descriptor: { html: { html: '<div style="display:flex">a</div>' } } }]), META);
  t.ok(flex.findings.some((f) => f.rule === 'css_client_support' && f.params?.feature === 'display:flex'));
});

t.test('the compact HTML given to doiuse finds what the whole HTML finds', async (t) => {
  const html = (await processDocument(doc([button('b1', 'https://x.test', 'Go', { 'border-radius': '8px' }), { uuid: 'x1', type: `${T}html`, descriptor: { html: { html: '<div style="display:flex;background-image:url(a;b.png)">a</div>' } } }]), META)).html!;
  const { doIUseEmail } = await import('@jsx-email/doiuse-email');
  const clients = ['apple-mail.*', 'gmail.*', 'outlook.*', 'yahoo.*'];
  const all = (h: string) => {
    const r = doIUseEmail(h, { emailClients: clients });
    return new Set(r.success ? [] : r.errors);
  };
  const full = all(html);
  const compact = all(compactHtml(html));
  // Zero radii and paddings and float:none are dropped on purpose (they restate the initial
  // value); everything else is found the same.
  t.same([...compact].filter((e) => !full.has(e)), [], 'nothing new');
  t.same([...full].filter((e) => !compact.has(e) && !/^`(border-radius|padding|float)`/.test(e)), [], 'nothing lost');
  t.same(checkCssSupport(html).map((f) => f.params?.feature), ['background-image', 'border-radius', 'display:flex']);
});

t.test('findings come in document order, the same every time', async (t) => {
  const d = {
    page: {
      rows: [
        { uuid: 'r1', columns: [{ uuid: 'c1', 'grid-columns': 6, modules: [button('b1', ''), image('i1', { src: 'https://x.test/a.png' })] }] },
        { uuid: 'r2', columns: [{ uuid: 'c2', 'grid-columns': 12, modules: [button('b2', 'javascript:x'), { uuid: 'z', type: 'nope', descriptor: {} }] }] },
      ],
    },
  };
  const a = await processDocument(d, { subject: null, preheader: null });
  t.same(
    a.errors.map((f) => [f.rule, f.pointer]),
    [
      ['unsafe_link', '/page/rows/1/columns/0/modules/0/descriptor/button/href'],
      ['module_type_invalid', '/page/rows/1/columns/0/modules/1/type'],
    ],
  );
  t.same(
    a.findings.map((f) => [f.rule, f.pointer]),
    [
      ['subject_missing', ''],
      ['preheader_missing', ''],
      ['grid_columns_sum', '/page/rows/0/columns'],
      ['link_missing', '/page/rows/0/columns/0/modules/0/descriptor/button/href'],
      ['image_missing_width', '/page/rows/0/columns/0/modules/1/descriptor/image'],
      ['image_missing_alt', '/page/rows/0/columns/0/modules/1/descriptor/image/alt'],
    ],
  );
  const b = await processDocument(structuredClone(d), { subject: null, preheader: null });
  t.same(b, a);
  t.same(sortFindings(d, [...a.findings].reverse()), a.findings, 'sorting is independent of the input order');
});

t.test('every rule is declared once with its level, and errors carry their 422 code', async (t) => {
  for (const [name, r] of Object.entries(RULES)) {
    t.ok(['error', 'warning', 'suggestion'].includes(r.level), name);
    t.equal('code' in r, r.level === 'error', `${name}: a code exactly when an error`);
  }
});

interface Sample {
  file: string;
  quirks: string[];
}

t.test('every corpus document: no errors, and the warnings its quirks call for', async (t) => {
  const manifest = JSON.parse(readFileSync(join(CORPUS, 'manifest.json'), 'utf8')) as { samples: Sample[] };
  const files = readdirSync(join(CORPUS, 'samples')).filter((f) => f.endsWith('.json'));
  t.equal(manifest.samples.length, files.length, 'the manifest lists every file');
  for (const s of manifest.samples) {
    const d = JSON.parse(readFileSync(join(CORPUS, s.file), 'utf8')) as Json;
    const r = await processDocument(d, META);
    t.same(r.errors, [], `${s.file}: no errors`);
    t.type(r.html, 'string', `${s.file}: rendered`);
    const rules = (rule: string) => r.findings.filter((f) => f.rule === rule);

    // The modules of the document, with their uuids, read directly from the file.
    const modules: Json[] = d.page.rows.flatMap((row: Json) => row.columns.flatMap((c: Json) => c.modules));
    const ofKind = (k: string) => modules.filter((m) => m.type === `${T}${k}`);

    const noAlt = ofKind('image').filter((m) => !m.descriptor.image?.alt?.trim());
    if (s.quirks.includes('image-without-alt')) t.ok(noAlt.length > 0, `${s.file}: has images without alt`);
    t.same(
      rules('image_missing_alt').filter((f) => f.pointer.endsWith('/image/alt')).map((f) => f.uuid),
      noAlt.map((m) => m.uuid),
      `${s.file}: a warning at each image without alt, with its uuid`,
    );

    const noHref = ofKind('button').filter((m) => !m.descriptor.button?.href?.trim());
    if (s.quirks.includes('button-without-href')) t.ok(noHref.length > 0, `${s.file}: has buttons without href`);
    t.same(
      rules('link_missing').filter((f) => f.pointer.endsWith('/button/href')).map((f) => f.uuid),
      noHref.map((m) => m.uuid),
      `${s.file}: a warning at each button without a link`,
    );

    if (s.quirks.includes('duplicate-uuid')) t.ok(rules('duplicate_uuid').length > 0, `${s.file}: duplicate uuids warned`);
    else t.same(rules('duplicate_uuid'), [], `${s.file}: no duplicate uuids`);
    if (s.quirks.includes('grid-sum-24')) t.same(rules('grid_columns_sum').map((f) => f.params), [{ sum: 24 }], `${s.file}: 12+12`);
    if (s.quirks.includes('script-in-html-module')) t.equal(rules('html_module_script').length, ofKind('html').length, `${s.file}: each html module with a script`);
    if (s.quirks.includes('vendor-prefixed-css-values')) t.ok(rules('css_vendor_prefix').length > 0, `${s.file}: -webkit-* values warned`);
    if (s.quirks.includes('missing-grid-columns')) t.ok(rules('grid_columns_missing').length > 0, `${s.file}: missing grid-columns warned`);
    for (const f of r.findings) {
      t.ok(Object.hasOwn(RULES, f.rule), `${s.file}: ${f.rule} is a declared rule`);
      t.ok(f.level === 'warning' || f.level === 'suggestion');
    }
  }
});

t.test('the format description is free of errors for every default module too', async (t) => {
  const d = formatDescription('es');
  const sk = structuredClone(d.skeleton) as Json;
  d.modules.forEach((m, i) => sk.page.rows[0].columns[0].modules.push({ uuid: `d${i}`, ...d.defaults.modules[m.kind] }));
  const r = await processDocument(sk, META);
  t.same(r.errors, []);
  t.ok(r.html);
});
