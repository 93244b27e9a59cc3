import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DomUtils, parseDocument } from 'htmlparser2';
import t from 'tap';
import { KINDS, moduleType, SUPPORTED_KINDS } from '../engines/beefree/format/nodes.js';
import { renderHtml } from '../domain/mail/merge-tags.js';
import { renderDocument, type RenderMeta } from '../engines/beefree/render/index.js';
import { MODULE_BUILDERS } from '../engines/beefree/render/modules/index.js';
import { corpusPath } from './helpers/corpus.js';

/**
 * The template renderer against real MJML: each module kind, rows and columns, the document's
 * head, merge tags, the text part, MJML's findings at the right node, and every real Beefree
 * document of the shared corpus.
 */

const CORPUS = corpusPath('templates', 'beefree', 'samples');
const NO_META: RenderMeta = { preheader: null, title: null };

type Json = Record<string, unknown>;

function mod(kind: string, uuid: string, descriptor: Json): Json {
  return { uuid, type: moduleType(kind), descriptor };
}

function column(uuid: string, share: number | undefined, modules: Json[]): Json {
  return { uuid, ...(share === undefined ? {} : { 'grid-columns': share }), modules };
}

function row(uuid: string, columns: Json[], content: Json = {}, container: Json = {}): Json {
  return { uuid, content, container, columns };
}

function docOf(rows: Json[], page: Json = {}): Json {
  return { page: { body: { content: { style: { color: '#222222', 'font-family': 'Arial, sans-serif' }, computedStyle: { linkColor: '#0068A5', messageWidth: '600px' } } }, rows, ...page } };
}

/** One module in a one-column row. */
function single(module: Json): Json {
  return docOf([row('row-1', [column('col-1', 12, [module])])]);
}

async function render(doc: Json, meta: RenderMeta = NO_META) {
  return renderDocument(doc, meta);
}

/** The visible text of some HTML, whitespace collapsed (entities decoded). */
function textOf(html: string): string {
  const doc = parseDocument(html, { decodeEntities: true });
  for (const el of DomUtils.findAll((e) => e.name === 'style' || e.name === 'title' || e.name === 'script', doc.children)) DomUtils.removeElement(el);
  return DomUtils.textContent(doc).replace(/\s+/g, ' ').trim();
}

function elements(html: string, name: string) {
  return DomUtils.findAll((e) => e.name === name, parseDocument(html, { decodeEntities: true }).children);
}

t.test('every declared module kind has a builder, and only those', async (t) => {
  t.same(Object.keys(MODULE_BUILDERS).sort(), [...SUPPORTED_KINDS].sort());
});

t.test('each module kind renders', async (t) => {
  t.test('paragraph: html, typography, link colour, paragraph spacing', async (t) => {
    const r = await render(
      single(
        mod('paragraph', 'p-1', {
          paragraph: {
            html: '<p>First <a href="https://example.com/a">link</a></p><p>Second</p>',
            style: { color: '#333333', 'font-size': '18px', 'text-align': 'right' },
            computedStyle: { linkColor: '#FF0000', paragraphSpacing: '12px' },
          },
          style: { 'padding-top': '7px', 'padding-right': '8px', 'padding-bottom': '9px', 'padding-left': '11px' },
        }),
      ),
    );
    t.same(r.findings, []);
    t.match(r.html, /<p style="margin:0;margin-bottom:12px;">First <a href="https:\/\/example.com\/a" style="color:#FF0000;">link<\/a><\/p><p style="margin:0;margin-bottom:0;">Second<\/p>/);
    t.match(r.html, /font-size:18px;[^"]*text-align:right;color:#333333;/);
    t.match(r.html, /padding:7px 8px 9px 11px;/);
  });

  t.test('heading: an <hN> with its typography inline', async (t) => {
    const r = await render(single(mod('heading', 'h-1', { heading: { title: 'h2', text: 'Big <em>news</em>', style: { 'font-size': '30px', color: '#111111' } } })));
    const h2 = elements(r.html, 'h2');
    t.equal(h2.length, 1);
    t.equal(textOf(DomUtils.getOuterHTML(h2[0]!)), 'Big news');
    t.match(h2[0]!.attribs.style, /margin:0;color:#111111;.*font-size:30px;/);
  });

  t.test('list: the <ul> with indent, bullets and item spacing; an <ol> keeps its numbers', async (t) => {
    const r = await render(
      single(
        mod('list', 'l-1', {
          list: { html: '<ul><li>One</li><li>Two</li></ul>', computedStyle: { liIndent: '30px', liSpacing: '4px', listStyleType: 'square' } },
        }),
      ),
    );
    t.match(r.html, /<ul style="margin:0;padding:0 0 0 30px;list-style-type:square;list-style-position:outside;"><li style="margin-bottom:4px;">One<\/li>/);
    const ol = await render(single(mod('list', 'l-2', { list: { html: '<ol><li>A</li></ol>', computedStyle: { startListFrom: '3' } } })));
    t.match(ol.html, /<ol style="margin:0;padding:0 0 0 20px;list-style-position:outside;" start="3">/, 'no bullet type forced on a numbered list');
  });

  t.test('text (legacy): its html', async (t) => {
    const r = await render(single(mod('text', 't-1', { text: { html: '<div><p>Legacy words</p></div>', style: { color: '#444444' } } })));
    t.match(textOf(r.html), /Legacy words/);
    t.match(r.html, /color:#444444;/);
  });

  t.test('image: src, alt, link, width from the editor, alignment', async (t) => {
    const r = await render(
      single(
        mod('image', 'i-1', {
          image: { src: 'https://cdn.example/a.png', alt: 'A picture', href: 'https://example.com/i', target: '_blank' },
          style: { 'padding-top': '0px', 'padding-right': '0px', 'padding-bottom': '0px', 'padding-left': '0px' },
          computedStyle: { class: 'left fixedwidth', width: 250.4 },
        }),
      ),
    );
    const imgs = elements(r.html, 'img');
    t.equal(imgs.length, 1);
    t.equal(imgs[0]!.attribs.src, 'https://cdn.example/a.png');
    t.equal(imgs[0]!.attribs.alt, 'A picture');
    t.equal(imgs[0]!.attribs.width, '250');
    t.equal((imgs[0]!.parent as { attribs?: Record<string, string> }).attribs?.href, 'https://example.com/i', 'the image is the link');
    t.match(r.html, /<td[^>]*align="left"[^>]*>\s*<table[^>]*>\s*<tbody>\s*<tr>\s*<td[^>]*style="width:250px;"/);
    const none = await render(single(mod('image', 'i-2', { image: { src: '', alt: 'x' } })));
    t.equal(elements(none.html, 'img').length, 0, 'no src: no <img>');
  });

  t.test('button: a bulletproof mj-button with the flattened label', async (t) => {
    const r = await render(
      single(
        mod('button', 'b-1', {
          button: {
            label: '<div class="txtTinyMce-wrapper"><p style="word-break:break-word;"><span>Buy now</span></p></div>',
            href: 'https://shop.example/buy',
            style: { 'background-color': '#FF819C', color: '#FFFFFF', 'border-radius': '25px', 'padding-top': '5px', 'padding-right': '20px', 'padding-bottom': '5px', 'padding-left': '20px' },
          },
          style: { 'text-align': 'center' },
        }),
      ),
    );
    const a = elements(r.html, 'a').find((e) => e.attribs.href === 'https://shop.example/buy');
    t.ok(a, 'the button links');
    t.equal(textOf(DomUtils.getOuterHTML(a!)), 'Buy now');
    t.notMatch(DomUtils.getInnerHTML(a!), /<p|<div/, 'no block element inside the link');
    t.match(r.html, /bgcolor="#FF819C"/, 'the colour is on the table cell (Outlook)');
    t.match(a!.attribs.style, /padding:5px 20px 5px 20px;/);
  });

  t.test('divider: the border-top shorthand as MJML line', async (t) => {
    const r = await render(single(mod('divider', 'd-1', { divider: { style: { 'border-top': '2px dashed #FF0000', width: '60%' } }, computedStyle: { align: 'left' } })));
    t.match(r.html, /border-top:dashed 2px #FF0000;/);
    t.match(r.html, /width:60%/);
  });

  t.test('spacer: its height', async (t) => {
    const r = await render(single(mod('spacer', 's-1', { spacer: { style: { height: '44px' } } })));
    t.match(r.html, /height:44px;/);
  });

  t.test('social: one linked icon per network, the set\'s own images', async (t) => {
    const icon = (name: string) => ({ type: 'follow', name, text: '', image: { src: `https://icons.example/${name}.png`, href: `https://${name}.example/us`, alt: name, title: name } });
    const r = await render(single(mod('social', 'so-1', { iconsList: { icons: [icon('facebook'), icon('instagram')] }, computedStyle: { iconsDefaultWidth: 32, padding: '0 5px 5px 0' } })));
    const imgs = elements(r.html, 'img');
    t.same(imgs.map((i) => i.attribs.src), ['https://icons.example/facebook.png', 'https://icons.example/instagram.png']);
    t.same(imgs.map((i) => i.attribs.width), ['32', '32']);
    t.ok(elements(r.html, 'a').some((a) => a.attribs.href === 'https://instagram.example/us'));
    t.notMatch(r.html, /facebook\.com\/sharer/, 'no MJML share link added');
  });

  t.test('icons: image and text per item', async (t) => {
    const r = await render(
      single(mod('icons', 'ic-1', { iconsList: { icons: [{ image: 'https://icons.example/truck.png', text: 'Free shipping', textPosition: 'right', width: '40', height: '40', href: '' }] } })),
    );
    t.equal(elements(r.html, 'img')[0]?.attribs.src, 'https://icons.example/truck.png');
    t.match(textOf(r.html), /Free shipping/);
  });

  t.test('menu: an mj-navbar link per item, text as written (not uppercased)', async (t) => {
    const r = await render(
      single(
        mod('menu', 'mn-1', {
          menuItemsList: { items: [{ text: 'Shop', link: { href: 'https://example.com/shop' } }, { text: 'Blog', link: { href: 'https://example.com/blog' } }] },
          style: { color: '#101112', 'font-size': '16px' },
        }),
      ),
    );
    const links = elements(r.html, 'a').filter((a) => a.attribs.href?.startsWith('https://example.com/'));
    t.same(links.map((a) => [a.attribs.href, textOf(DomUtils.getInnerHTML(a))]), [
      ['https://example.com/shop', 'Shop'],
      ['https://example.com/blog', 'Blog'],
    ]);
    t.match(links[0]!.attribs.style, /text-transform:none;/);
  });

  t.test('html: the author\'s markup in document order, without scripts or event handlers', async (t) => {
    const doc = docOf([
      row('row-1', [
        column('col-1', 12, [
          mod('paragraph', 'p-before', { paragraph: { html: '<p>BEFORE</p>' } }),
          mod('html', 'h-1', {
            html: {
              html: '<div class="mine" onclick="steal()">CUSTOM<script>alert(1)</script><img src="https://x.example/p.png" onerror="alert(2)"><a href="javascript:alert(3)">bad</a><a href=" &#106;ava&#x09;script:alert(4)">encoded</a></div></td></tr></table>',
            },
          }),
          mod('paragraph', 'p-after', { paragraph: { html: '<p>AFTER</p>' } }),
        ]),
      ]),
    ]);
    const r = await render(doc);
    t.notMatch(r.html, /<script|alert\(|onclick|onerror/i);
    t.match(r.html, /<div class="mine">CUSTOM<img src="https:\/\/x.example\/p.png"><a>bad<\/a><a>encoded<\/a><\/div>/);
    const text = textOf(r.html);
    t.ok(text.indexOf('BEFORE') < text.indexOf('CUSTOM') && text.indexOf('CUSTOM') < text.indexOf('AFTER'), 'kept in document order');
    t.equal(elements(r.html, 'table').length, elements(r.html, 'table').filter((e) => e.parent).length);
  });

  t.test('video: the thumbnail linked to the video', async (t) => {
    const r = await render(single(mod('video', 'v-1', { video: { src: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ', alt: 'Our video' } })));
    const img = elements(r.html, 'img')[0];
    t.equal(img?.attribs.src, 'https://img.youtube.com/vi/dQw4w9WgXcQ/hqdefault.jpg');
    t.equal((img?.parent as { attribs?: Record<string, string> }).attribs?.href, 'https://www.youtube.com/watch?v=dQw4w9WgXcQ');
    const own = await render(single(mod('video', 'v-2', { video: { src: 'https://vimeo.com/1', thumbSrc: 'https://cdn.example/thumb.jpg' } })));
    t.equal(elements(own.html, 'img')[0]?.attribs.src, 'https://cdn.example/thumb.jpg');
  });

  t.test('table: header cells and data cells', async (t) => {
    const r = await render(
      single(
        mod('table', 'tb-1', {
          table: {
            content: { headers: [{ cells: [{ html: 'Product' }, { html: 'Price' }] }], rows: [{ cells: [{ html: 'Shirt' }, { html: '<b>19</b> €' }] }] },
            computedStyle: { headersBackgroundColor: '#EAEAEA' },
          },
        }),
      ),
    );
    t.same(elements(r.html, 'th').map((c) => textOf(DomUtils.getInnerHTML(c))), ['Product', 'Price']);
    t.same(elements(r.html, 'td').filter((c) => !c.attribs.class && !c.attribs.align && /word-break/.test(c.attribs.style ?? '') && /vertical-align:top/.test(c.attribs.style ?? '')).map((c) => textOf(DomUtils.getInnerHTML(c))), ['Shirt', '19 €']);
    t.match(r.text, /Product \| Price\nShirt \| 19 €/, 'one line per table row in the text part');
  });
});

t.test('columns: widths from grid-columns, proportional when they do not sum to 12, equal when missing', async (t) => {
  const p = (id: string) => mod('paragraph', id, { paragraph: { html: `<p>${id}</p>` } });
  const r = await render(
    docOf([
      row('r-435', [column('a', 4, [p('a1')]), column('b', 3, [p('b1')]), column('c', 5, [p('c1')])]),
      row('r-24', [column('d', 12, [p('d1')]), column('e', 12, [p('e1')])]),
      row('r-none', [column('f', undefined, [p('f1')]), column('g', undefined, [p('g1')]), column('h', undefined, [p('h1')])]),
    ]),
  );
  for (const cls of ['mj-column-per-33-3333', 'mj-column-per-25', 'mj-column-per-41-6667', 'mj-column-per-50']) t.match(r.html, new RegExp(`class="${cls} `), cls);
  t.equal((r.html.match(/class="mj-column-per-50 /g) ?? []).length, 2, '12+12 renders as two halves');
  t.equal((r.html.match(/class="mj-column-per-33-3333 /g) ?? []).length, 4, '4/12 once, and three equal columns without grid-columns');
});

t.test('rows: stacking off wraps the columns in an mj-group; reverse stacking reverses them in an rtl section', async (t) => {
  const p = (id: string) => mod('paragraph', id, { paragraph: { html: `<p>${id}</p>` } });
  const two = (uuid: string, computedStyle: Json) => row(uuid, [column(`${uuid}-1`, 6, [p(`${uuid}-FIRST`)]), column(`${uuid}-2`, 6, [p(`${uuid}-SECOND`)])], { computedStyle });
  const r = await render(docOf([two('stack', {}), two('nostack', { rowColStackOnMobile: false }), two('reverse', { rowReverseColStackOnMobile: true })]));
  const text = textOf(r.html);
  t.ok(text.indexOf('stack-FIRST') < text.indexOf('stack-SECOND'));
  // mj-group: one 100% wrapper whose columns keep an inline width (no stacking below the breakpoint).
  const group = r.html.slice(r.html.indexOf('nostack-FIRST') - 3000, r.html.indexOf('nostack-FIRST'));
  t.match(group, /class="mj-column-per-100 mj-outlook-group-fix"[^>]*>\s*<!--\[if mso \| IE\]><table[^>]*><tr><td[^>]*><!\[endif\]-->\s*<div\s+class="mj-column-per-50 mj-outlook-group-fix" style="[^"]*width:50%;"/);
  const reverse = r.html.slice(r.html.indexOf('nostack-SECOND'));
  t.match(reverse, /direction:rtl;/, 'the reversed section is rtl');
  t.ok(reverse.indexOf('reverse-SECOND') < reverse.indexOf('reverse-FIRST'), 'the columns are written in reverse order');
  const normal = r.html.slice(0, r.html.indexOf('nostack-FIRST'));
  t.notMatch(normal, /direction:rtl/);
});

t.test('rows: full-width band, content background, padding, border, background image', async (t) => {
  const r = await render(
    docOf([
      row(
        'r-1',
        [column('c-1', 12, [mod('paragraph', 'p-1', { paragraph: { html: '<p>x</p>' } })])],
        {
          style: {
            'background-color': '#FFFFFF',
            'background-image': "url('https://cdn.example/bg.png')",
            'background-repeat': 'no-repeat',
            'padding-top': '20px',
            'border-radius': '8px',
            'border-top': '2px solid #000000',
          },
        },
        { style: { 'background-color': '#FF98AD' } },
      ),
    ]),
  );
  t.match(r.html, /<table[^>]*style="background:#FF98AD;background-color:#FF98AD;width:100%;"/, 'a full-width band');
  t.match(r.html, /background:#FFFFFF url\('https:\/\/cdn\.example\/bg\.png'\)/);
  t.match(r.html, /border-radius:8px/);
  t.match(r.html, /border-top:2px solid #000000/);
  t.match(r.html, /padding:20px 0px 0px 0px;/);
});

t.test('hide on mobile / desktop: classes and their media queries; desktop-hidden content skipped by Outlook', async (t) => {
  const r = await render(
    docOf([
      row('r-1', [
        column('c-1', 12, [
          mod('paragraph', 'p-m', { paragraph: { html: '<p>MOBILE-HIDDEN</p>' }, computedStyle: { hideContentOnMobile: true } }),
          mod('paragraph', 'p-d', { paragraph: { html: '<p>DESKTOP-HIDDEN</p>' }, computedStyle: { hideContentOnDesktop: true } }),
          mod('paragraph', 'p-h', { paragraph: { html: '<p>NOT-IN-HTML</p>' }, computedStyle: { hideContentOnHtml: true } }),
        ]),
      ]),
    ]),
  );
  t.match(r.html, /@media only screen and \(max-width:479px\) \{ \.cartero-hide-mobile \{ display:none !important;/);
  t.match(r.html, /@media only screen and \(min-width:480px\) \{ \.cartero-hide-desktop \{ display:none !important;/);
  t.match(r.html, /<td[^>]*class="cartero-hide-mobile"[^>]*>\s*<div[^>]*><p[^>]*>MOBILE-HIDDEN/);
  t.match(r.html, /<!--\[if !mso\]><!-->\s*<tr>\s*<td[^>]*class="cartero-hide-desktop"[^>]*>\s*<div[^>]*><p[^>]*>DESKTOP-HIDDEN[\s\S]*?<!--<!\[endif\]-->/);
  t.notMatch(r.html, /NOT-IN-HTML/);
  const plain = await render(single(mod('paragraph', 'p', { paragraph: { html: '<p>x</p>' } })));
  t.notMatch(plain.html, /cartero-hide/, 'no media queries when nothing is hidden');
});

t.test('document: width, backgrounds, default font with fallbacks, web fonts, title, language and direction', async (t) => {
  const doc = {
    page: {
      head: { meta: { lang: 'ar', title: 'Head title' } },
      body: {
        container: { style: { 'background-color': '#EEEEEE' } },
        content: { style: { color: '#123456', 'font-family': "'Montserrat'" }, computedStyle: { messageWidth: '640px', messageBackgroundColor: '#FAFAFA' } },
        webFonts: [{ name: 'Montserrat', fontFamily: "'Montserrat', sans-serif", url: 'https://fonts.googleapis.com/css?family=Montserrat' }],
      },
      rows: [row('r', [column('c', 12, [mod('paragraph', 'p', { paragraph: { html: '<p>مرحبا</p>' } })])])],
    },
  };
  const r = await render(doc);
  t.match(r.html, /<html lang="ar" dir="rtl"/);
  t.match(r.html, /<title>Head title<\/title>/);
  t.match(r.html, /<body\s+style="word-spacing:normal;background-color:#EEEEEE;">/);
  t.match(r.html, /max-width:640px/);
  t.match(r.html, /background-color:#FAFAFA/, 'the message background under transparent rows');
  t.match(r.html, /<link href="https:\/\/fonts.googleapis.com\/css\?family=Montserrat" rel="stylesheet" type="text\/css">/);
  t.match(r.html, /font-family:'Montserrat', sans-serif;/, 'a lone web font gets a generic fallback');
  t.match(r.html, /color:#123456;/);
  t.notMatch(r.html, /fonts\.googleapis\.com\/css\?family=(Ubuntu|Open\+Sans|Lato|Roboto)/, 'none of MJML\'s default fonts');
  const titled = await render(doc, { preheader: null, title: 'The subject' });
  t.match(titled.html, /<title>The subject<\/title>/, "the template's title wins over head.meta.title");
});

t.test('preheader: a hidden block first in the body, escaped, and not in the text part', async (t) => {
  const r = await render(single(mod('paragraph', 'p', { paragraph: { html: '<p>Body words</p>' } })), { preheader: 'Hi {{first_name}} <sale> & more {{ "<script>" }}', title: null });
  t.match(r.html, /<body[^>]*>\s*<div style="display:none;[^"]*">Hi \{\{first_name\}\} &lt;sale&gt; &amp; more \{\{ "&lt;script&gt;" \}\}<\/div>/);
  t.notMatch(r.text, /sale|more/, 'the preheader is not repeated as body text');
  t.match(r.text, /Body words/);
  const none = await render(single(mod('paragraph', 'p', { paragraph: { html: '<p>x</p>' } })));
  t.notMatch(none.html, /<body[^>]*>\s*<div style="display:none;/);
});

t.test('vendor-prefixed values are normalised (MJML would refuse -webkit-center)', async (t) => {
  const r = await render(
    docOf([
      row('r', [
        column('c', 12, [
          mod('paragraph', 'p', { paragraph: { html: '<p>centred</p>', style: { 'text-align': '-webkit-center' } } }),
          mod('button', 'b', { button: { label: 'Go', href: 'https://x.example' }, style: { 'text-align': '-webkit-right' } }),
          mod('image', 'i', { image: { src: 'https://x.example/i.png', alt: 'i' }, style: { 'text-align': '-moz-left' } }),
        ]),
      ]),
    ]),
  );
  t.same(r.findings, [], 'no MJML error');
  t.notMatch(r.html, /-webkit-(center|right)|-moz-left/);
  t.match(r.html, /text-align:center;[^"]*"\s*><p[^>]*>centred</, 'the paragraph centred');
  t.match(r.html, /<td\s+align="right"[^>]*>\s*<table[^>]*style="border-collapse:separate;/, 'the button aligned right');
  t.match(r.html, /<td\s+align="left"[^>]*>\s*<table[^>]*style="border-collapse:collapse;border-spacing:0px;"/, 'the image aligned left');
});

t.test('merge tags survive in text and in links, and fill at send time', async (t) => {
  const doc = docOf([
    row('r', [
      column('c', 12, [
        mod('paragraph', 'p', { paragraph: { html: '<p>Hi {{first_name}}, {% if vip %}VIP {% endif %}<a href="https://shop.example/?u={{ user_id }}&amp;c=1">shop</a></p>' } }),
        mod('button', 'b', { button: { label: 'Unsubscribe', href: '{{ unsubscribe_url | default: "https://example.com/u" }}' } }),
        mod('image', 'i', { image: { src: 'https://cdn.example/{{ image_id }}.png', alt: 'x', href: '*|UNSUB|*' } }),
        mod('menu', 'm', { menuItemsList: { items: [{ text: 'Account of {{ first_name }}', link: { href: 'https://example.com/a/{{ user_id }}?x=1&y=2' } }] } }),
      ]),
    ]),
  ]);
  const r = await render(doc);
  t.match(r.html, /Hi \{\{first_name\}\}, \{% if vip %\}VIP \{% endif %\}/);
  t.match(r.html, /href="https:\/\/shop.example\/\?u=\{\{ user_id \}\}&amp;c=1"/);
  t.match(r.html, /href="\{\{ unsubscribe_url \| default: 'https:\/\/example.com\/u' \}\}"/, 'a double-quoted Liquid argument becomes the same string in single quotes');
  t.match(r.html, /src="https:\/\/cdn.example\/\{\{ image_id \}\}.png"/);
  t.match(r.html, /href="\*\|UNSUB\|\*"/);
  t.match(r.html, /href="https:\/\/example.com\/a\/\{\{ user_id \}\}\?x=1&amp;y=2"/);
  t.match(r.text, /Hi \{\{first_name\}\}/);
  t.match(r.text, /\[https:\/\/shop.example\/\?u=\{\{ user_id \}\}&c=1\]/);
  const sent = renderHtml(r.html, { first_name: 'Ann <b>', user_id: 42, vip: true, image_id: 'abc' });
  t.match(sent, /Hi Ann &lt;b&gt;, VIP /);
  t.match(sent, /href="https:\/\/shop.example\/\?u=42&amp;c=1"/);
  t.match(sent, /href="https:\/\/example.com\/u"/);
  t.match(sent, /src="https:\/\/cdn.example\/abc.png"/);
});

t.test('attribute values are escaped: a quote in a link cannot open a new attribute, not even inside a merge tag', async (t) => {
  const r = await render(single(mod('button', 'b', { button: { label: 'x', href: 'https://x.example/" onmouseover="alert(1)' } })));
  t.notMatch(r.html, /" onmouseover="/);
  t.match(r.html, /href="https:\/\/x.example\/&quot; onmouseover=&quot;alert\(1\)"/);
  const tag = await render(single(mod('button', 'b', { button: { label: 'x', href: `{{ x" onmouseover="alert(1) }}` } })));
  t.notMatch(tag.html, /" onmouseover="/);
  const both = await render(single(mod('button', 'b', { button: { label: 'x', href: `{{ x | default: "it's" }}" onclick="y` } })));
  t.notMatch(both.html, /" onclick="/);
  t.match(both.html, /href="\{\{ x \| default: &quot;it's&quot; \}\}&quot; onclick=&quot;y"/);
});

t.test('a fragment cannot close the layout around it', async (t) => {
  const r = await render(
    docOf([
      row('r', [
        column('c1', 6, [mod('paragraph', 'p', { paragraph: { html: '<p>LEFT</td></tr></table></div><div>' } })]),
        column('c2', 6, [mod('paragraph', 'q', { paragraph: { html: '<p>RIGHT' } })]),
      ]),
    ]),
  );
  t.match(r.html, /<p[^>]*>LEFT<\/p><div><\/div><\/div>/);
  t.match(r.html, /<p[^>]*>RIGHT<\/p><\/div>/);
});

t.test('pathological nesting: reduced to its text instead of crashing or stalling', async (t) => {
  const deep = await render(single(mod('paragraph', 'p', { paragraph: { html: '<div><b>'.repeat(10_000) + 'DEEP WORDS' } })));
  t.match(deep.html, /DEEP WORDS/);
  t.notMatch(deep.html, /<b>/, 'markup nested past the bound is dropped');
  t.match(deep.text, /DEEP WORDS/);
  const shallow = await render(single(mod('paragraph', 'p', { paragraph: { html: '<div>'.repeat(40) + '<b>kept</b>' } })));
  t.match(shallow.html, /<b>kept<\/b>/, 'ordinary nesting keeps its markup');
  // 45 nested lists around 25,000 lines: past html-to-text's indentation bound, the words remain.
  const lists = await render(single(mod('html', 'h', { html: { html: '<ul><li>'.repeat(45) + '<p>line</p>'.repeat(25_000) + 'LAST' } })));
  t.match(lists.text, /^line\nline\n/);
  t.match(lists.text, /LAST$/);
});

t.test('MJML errors become warnings at the node that caused them', async (t) => {
  const doc = docOf([
    row('row-a', [
      column('col-a', 12, [
        mod('paragraph', 'para-ok', { paragraph: { html: '<p>fine</p>' } }),
        mod('paragraph', 'para-bad', { paragraph: { html: '<p>big</p>', style: { 'font-size': '2em' } } }),
      ]),
    ]),
    row('row-b', [column('col-b', 12, [mod('button', 'btn-bad', { button: { label: 'x', href: 'https://x.example', style: { 'font-size': '1.5rem' } } })])]),
  ]);
  const r = await render(doc);
  t.same(
    r.findings.map((f) => [f.level, f.rule, f.uuid, f.pointer]),
    [
      ['warning', 'mjml_validation', 'para-bad', '/page/rows/0/columns/0/modules/1'],
      ['warning', 'mjml_validation', 'btn-bad', '/page/rows/1/columns/0/modules/0'],
    ],
  );
  t.match(r.findings[0]!.message, /mj-text: Attribute font-size has invalid value: 2em/);
  t.match(r.html, /big/, 'rendered anyway (soft validation)');
});

t.test('unknown keys anywhere are ignored', async (t) => {
  const base = docOf([row('r', [column('c', 12, [mod('paragraph', 'p', { paragraph: { html: '<p>same</p>' } })])])]);
  const noisy = structuredClone(base) as { page: { rows: Array<Json & { columns: Array<Json & { modules: Json[] }> }> } & Json } & Json;
  noisy.comments = { a: 1 };
  noisy.page.translations = { x: 1 };
  noisy.page.rows[0]!.metadata = { m: 1 };
  noisy.page.rows[0]!.columns[0]!.hoverStyle = { color: 'red' };
  noisy.page.rows[0]!.columns[0]!.modules[0]!.synced = true;
  (noisy.page.rows[0]!.columns[0]!.modules[0]!.descriptor as Json).mobileStyle = { 'font-size': '40px' };
  t.equal((await render(noisy)).html, (await render(base)).html);
});

t.test('module kinds the renderer does not know render nothing (the checks report them)', async (t) => {
  const r = await render(
    docOf([row('r', [column('c', 12, [mod('form', 'f', { form: {} }), mod('empty', 'e', {}), { uuid: 'x', type: 'other-thing', descriptor: {} }, mod('paragraph', 'p', { paragraph: { html: '<p>kept</p>' } })])])]),
  );
  t.match(textOf(r.html), /^kept$/);
});

t.test('the declared example of every kind renders without MJML errors', async (t) => {
  for (const kind of SUPPORTED_KINDS) {
    const r = await render(single(mod(kind, `${kind}-1`, KINDS[kind]!.example)));
    t.same(r.findings, [], kind);
  }
});

// ---- the real documents ----

interface Corpus {
  file: string;
  doc: Json;
}

function corpus(): Corpus[] {
  return readdirSync(CORPUS)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({ file, doc: JSON.parse(readFileSync(join(CORPUS, file), 'utf8')) as Json }));
}

interface Found {
  kind: string;
  content: Json;
}

function modulesOf(doc: Json): Found[] {
  const out: Found[] = [];
  const page = doc.page as { rows?: Array<{ columns?: Array<{ modules?: Json[] }> }> };
  for (const r of page.rows ?? []) {
    for (const c of r.columns ?? []) {
      for (const m of c.modules ?? []) {
        const kind = String(m.type).replace('mailup-bee-newsletter-modules-', '');
        const d = (m.descriptor ?? {}) as Json;
        const hidden = ((d.computedStyle ?? {}) as Json).hideContentOnHtml === true;
        if (hidden) continue;
        const key = KINDS[kind]?.content_key;
        const content = ((key && d[key]) ?? (kind === 'paragraph' ? d.text : undefined) ?? {}) as Json;
        out.push({ kind, content });
      }
    }
  }
  return out;
}

t.test('every corpus document renders with its texts and images', async (t) => {
  const docs = corpus();
  t.ok(docs.length >= 8, 'the corpus is there');
  for (const { file, doc } of docs) {
    t.test(file, async (t) => {
      const r = await render(doc, { preheader: 'Corpus preheader', title: 'Corpus subject' });
      const visible = textOf(r.html);
      const found = modulesOf(doc);
      let texts = 0;
      for (const m of found) {
        const html = m.kind === 'heading' ? m.content.text : m.kind === 'paragraph' ? (m.content.html ?? m.content.text) : undefined;
        if (typeof html !== 'string') continue;
        const words = textOf(html);
        if (words === '') continue;
        texts++;
        t.ok(visible.includes(words), `${m.kind} text present: ${words.slice(0, 60)}`);
      }
      const images = found.filter((m) => m.kind === 'image' && typeof m.content.src === 'string' && m.content.src !== '');
      const imgs = elements(r.html, 'img');
      for (const src of new Set(images.map((m) => m.content.src as string))) {
        t.equal(imgs.filter((i) => i.attribs.src === src).length, images.filter((m) => m.content.src === src).length, `one <img> per image module: ${src}`);
      }
      t.equal(imgs.filter((i) => !i.attribs.src).length, 0, 'every <img> has a src');
      t.match(r.html, /<body[^>]*>\s*<div style="display:none;[^"]*">Corpus preheader<\/div>/, 'preheader block first in the body');
      t.match(r.html, /<title>Corpus subject<\/title>/);
      t.notMatch(r.text, /Corpus preheader/);
      t.notMatch(r.html, /<script/i);
      t.notMatch(r.html, /-webkit-(center|left|right)/);
      t.same(r.findings, [], 'no MJML error');
      t.ok(texts > 0 || found.every((m) => m.kind !== 'heading' && m.kind !== 'paragraph'), `${texts} heading/paragraph texts checked`);
    });
  }
});

/** Web fonts whose URLs hold `&`, `;`, `'`, `)`, `"`, `\` and `</style` (issue 24: Google Fonts URLs answered 500). */
const AWKWARD_FONTS = [
  { name: 'Roboto', fontFamily: "'Roboto', sans-serif", url: 'https://fonts.googleapis.com/css2?family=Roboto:ital,wght@0,400;0,700&display=swap' },
  { name: 'Lato', fontFamily: "'Lato', sans-serif", url: "https://fonts.googleapis.com/css?family=Lato:400,700&subset=latin-ext;x=1&q='quoted'&p=(paren)" },
  { name: 'Odd', fontFamily: 'Odd, serif', url: 'https://fonts.example/css?family=Odd&x="dq"&y=back\\slash&z=</style><script>alert(1)</script>' },
  { name: 'Unused', fontFamily: 'Unused, serif', url: 'https://fonts.example/css?family=Unused' },
];

t.test('web fonts: @import with CSS escaping (never &amp;), <link> with HTML escaping, nothing closes the <style>', async (t) => {
  const doc = docOf([
    row('r', [
      column('c', 12, [
        mod('paragraph', 'p', { paragraph: { html: '<p>Fonts</p>', style: { 'font-family': "'Lato', 'Odd', serif" } } }),
        mod('paragraph', 'q', { paragraph: { html: '<p>Body font</p>' } }),
      ]),
    ]),
  ]);
  (doc.page as any).body.content.style['font-family'] = "'Roboto', Arial, sans-serif";
  (doc.page as any).body.webFonts = AWKWARD_FONTS;
  const r = await render(doc);
  const imports = [...r.html.matchAll(/@import [^\n]*/g)].map((m) => m[0]);
  t.same(imports, [
    '@import url("https://fonts.googleapis.com/css2?family=Roboto:ital,wght@0,400;0,700&display=swap");',
    `@import url("https://fonts.googleapis.com/css?family=Lato:400,700&subset=latin-ext;x=1&q='quoted'&p=(paren)");`,
    '@import url("https://fonts.example/css?family=Odd&x=\\22 dq\\22 &y=back\\5c slash&z=\\3c /style\\3e \\3c script\\3e alert(1)\\3c /script\\3e ");',
  ], 'each used font once, as a CSS string; the unused one not at all');
  t.match(r.html, '<link href="https://fonts.googleapis.com/css2?family=Roboto:ital,wght@0,400;0,700&amp;display=swap" rel="stylesheet" type="text/css">');
  t.match(r.html, '<link href="https://fonts.example/css?family=Odd&amp;x=&quot;dq&quot;&amp;y=back\\slash&amp;z=&lt;/style&gt;&lt;script&gt;alert(1)&lt;/script&gt;" rel="stylesheet" type="text/css">');
  t.notMatch(r.html, /<script/i, 'no element comes out of a font URL');
  // The browser's reading of the <style> element: every font's URL comes back exactly.
  const css = elements(r.html, 'style').map((s) => DomUtils.textContent(s)).find((s) => s.includes('@import'))!;
  const decoded = [...css.matchAll(/@import url\("((?:[^"\\]|\\[0-9a-f]+ ?|\\.)*)"\)/g)].map((m) => m[1]!.replace(/\\([0-9a-f]+) ?/g, (_, h) => String.fromCodePoint(parseInt(h, 16))));
  t.same(decoded, AWKWARD_FONTS.slice(0, 3).map((f) => f.url));
  const links = elements(r.html, 'link').map((l) => l.attribs.href);
  t.same(links, AWKWARD_FONTS.slice(0, 3).map((f) => f.url), 'the <link> hrefs decode to the URLs');
});

t.test('values written into CSS cannot add declarations or end the style', async (t) => {
  const r = await render(
    single(mod('button', 'b', {
      button: { label: 'Go', href: 'https://x.example/', style: { 'background-color': 'red;background-image:url(https://evil.example/)', color: '#fff}</style><script>', 'font-family': "Arial; color: red" } },
    })),
  );
  t.notMatch(r.html, /evil\.example/);
  t.notMatch(r.html, /<script/i);
  t.notMatch(r.html, /color: red/);
});
