import { renderInput } from './helpers/render-input.js';
import t from 'tap';
import { checkTemplate, MAX_MERGE_TAGS, renderHtml } from '../domain/mail/merge-tags.js';
import { htmlToPlainText } from '../engines/html/plain-text.js';
import { renderMail, trackLinks, type RenderInput } from '../domain/mail/render.js';
import { RenderLimitExceeded } from '../engines/html/render-limit-exceeded.js';

/**
 * Rendering runs in linear time on hostile input, and within its bounds (issue 11, High 2).
 * Inputs are 1 MB, the sizes the old regex-based renderer needed minutes for ('<a ' * 80,000,
 * 240 KB, held the worker 17.6 s; the cost grew with the square of the size). Each must finish
 * under BOUND_MS, a bound 100 times what the linear code takes here (about 50 ms), so only a
 * super-linear renderer misses it, whatever the machine.
 */
const MB = 1_000_000;
const BOUND_MS = 5_000;
const repeat = (unit: string, size = MB) => unit.repeat(Math.ceil(size / unit.length));

function timed<T>(fn: () => T): { ms: number; value?: T; error?: unknown } {
  const started = performance.now();
  try {
    const value = fn();
    return { ms: performance.now() - started, value };
  } catch (error) {
    return { ms: performance.now() - started, error };
  }
}

const HOSTILE: Record<string, string> = {
  "'<a ' repeated (no tag ever closes)": repeat('<a '),
  "'<a href=' repeated": repeat('<a href='),
  "'<a href=\"' repeated": repeat('<a href="'),
  'an unclosed double quote': '<a href="' + 'x'.repeat(MB),
  'an unclosed single quote': "<a title='" + "x ' > <a ".repeat(MB / 10),
  "'<a x=1 ' attributes without end": '<a ' + repeat('x=1 '),
  'deep nesting: <div> * 200,000': repeat('<div>'),
  'deep nesting: <a> * 333,333': repeat('<a>'),
  'deep nesting, never closed: <table><tr><td>': repeat('<table><tr><td>'),
  'close tags that close nothing': repeat('<div>', MB / 2) + repeat('</span>', MB / 2),
  'unterminated comments': repeat('<!--'),
  'conditional comments that never end': repeat('<!--[if mso]><a href="https://x.example/">'),
  'character references': '<a href="' + repeat('&amp;') + '">x</a>',
  'blockquotes nested 500 deep, 200,000 lines': '<blockquote>'.repeat(500) + repeat('x<br>'),
  'lists nested 250 deep, 200,000 items': '<ol><li>'.repeat(250) + repeat('<li>x'),
  'many real links': repeat('<p><a href="https://shop.example/x?a=1&amp;b=2">Shop</a></p>'),
};

function input(html: string, over: Partial<RenderInput> = {}): RenderInput {
  return renderInput({ html, ...over });
}

t.test('link tracking is linear on hostile markup, and leaves it byte for byte', async (t) => {
  const marker = '"https://mail.example.test/t/c/x"';
  // The href each input has tracked, as written: putting it back in place of the tracked value
  // gives the input again, byte for byte.
  const written: Record<string, string> = {
    'many real links': '"https://shop.example/x?a=1&amp;b=2"',
    'conditional comments that never end': '"https://x.example/"',
  };
  for (const [name, html] of Object.entries(HOSTILE)) {
    const r = timed(() => trackLinks(html, 'https://mail.example.test', () => 'https://mail.example.test/t/c/x'));
    t.ok(r.ms < BOUND_MS, `${name}: ${Math.round(r.ms)} ms`);
    const out = r.value as string;
    t.equal(written[name] ? out.replaceAll(marker, written[name]) : out, html, `${name}: only hrefs changed`);
    if (written[name]) t.ok(out.includes(marker), `${name}: its links are tracked`);
  }
});

t.test('a whole rendering is linear on hostile markup, or refused by its bounds at once', async (t) => {
  // Bounds out of the way: this measures the renderer, not the time bound.
  const limits = { maxBodyBytes: 10 * MB, maxMs: 60_000 };
  for (const [name, html] of Object.entries(HOSTILE)) {
    const r = timed(() => renderMail(input(html), limits));
    t.ok(r.ms < BOUND_MS, `${name}: ${Math.round(r.ms)} ms${r.error ? ` (${(r.error as Error).message})` : ''}`);
    if (r.error) t.type(r.error, RenderLimitExceeded, `${name}: refused by a bound, not by a crash`);
  }
});

t.test('a text part is not derived from html that would make html-to-text super-linear', async (t) => {
  const depth = timed(() => htmlToPlainText(repeat('<div>')));
  t.type(depth.error, RenderLimitExceeded);
  t.match((depth.error as Error).message, /nests deeper than 512 elements/);
  const anchors = timed(() => htmlToPlainText(repeat('<a>')));
  t.match((anchors.error as Error).message, /nests deeper than 512 elements/, 'html-to-text nests <a> in <a>');
  const quotes = timed(() => htmlToPlainText('<blockquote>'.repeat(500) + repeat('x<br>')));
  t.match((quotes.error as Error).message, /blockquotes and lists/);
  // Real-world shapes stay well inside: nested layout tables, a long list, a quoted thread.
  const layout = '<table><tr><td>'.repeat(40) + repeat('<p>Text <a href="https://x.example/">link</a></p>', 200_000) + '</td></tr></table>'.repeat(40);
  t.match(htmlToPlainText(layout), /Text link \[https:\/\/x\.example\/\]/);
  t.match(htmlToPlainText('<ul>' + '<li>item'.repeat(5_000) + '</ul>'), / \* item/);
  t.match(htmlToPlainText('<blockquote>'.repeat(5) + 'x<br>'.repeat(1_000)), /> > > > > x/);
  t.match(htmlToPlainText('<p>x</p>'.repeat(600)), /x/, 'implied and explicit closes are not depth');
  t.match(htmlToPlainText('<p>x'.repeat(600) + '<li>y'.repeat(600)), /y/, 'unclosed <p> and <li> close each other, as the parser has it');
});

t.test('merge tags: too many tags are refused before liquidjs parses them', async (t) => {
  const many = repeat('{{a}}');
  const check = timed(() => checkTemplate(many));
  t.ok(check.ms < BOUND_MS, `checkTemplate: ${Math.round(check.ms)} ms`);
  t.match(check.value, `more than ${MAX_MERGE_TAGS} merge tags`, 'a 422 at acceptance says why');
  const render = timed(() => renderHtml(many, { a: 'x' }));
  t.ok(render.ms < BOUND_MS, `renderHtml: ${Math.round(render.ms)} ms`);
  t.match((render.error as Error).message, `more than ${MAX_MERGE_TAGS} merge tags`);
  for (const unit of ['{% if a %}x{% endif %}', '{%- if a -%}x{%- endif -%}', '{% cycle "a","b" %}', '{{ a | append: "x" | upcase }}']) {
    const r = timed(() => checkTemplate(repeat(unit)));
    t.ok(r.ms < BOUND_MS && r.value !== undefined, `${unit} * ${Math.ceil(MB / unit.length)}: refused in ${Math.round(r.ms)} ms`);
  }
  // At the bound, a template still parses and renders in well under the bound.
  const most = '{{a}}<br>'.repeat(MAX_MERGE_TAGS);
  t.equal(checkTemplate(most), undefined);
  const ok = timed(() => renderHtml(most, { a: 'x' }));
  t.ok(ok.ms < BOUND_MS, `${MAX_MERGE_TAGS} tags render in ${Math.round(ok.ms)} ms`);
  t.equal(ok.value, 'x<br>'.repeat(MAX_MERGE_TAGS));
  t.equal(checkTemplate('{{a}}'.repeat(MAX_MERGE_TAGS + 1))?.startsWith('more than'), true);
});

t.test('the render bounds: over the size or the time, RenderLimitExceeded says which', async (t) => {
  const over = timed(() => renderMail(input('<p>{{ blob }}</p>', { variables: { blob: 'x'.repeat(3_000) } }), { maxBodyBytes: 2_000, maxMs: 60_000 }));
  t.type(over.error, RenderLimitExceeded);
  t.match((over.error as Error).message, /the html part is 3007 bytes after merge tags, over the 2000 byte bound/);
  const text = timed(() => renderMail(input('<p>x</p>', { text: '{{ blob }}', variables: { blob: 'é'.repeat(1_500) } }), { maxBodyBytes: 2_000, maxMs: 60_000 }));
  t.match((text.error as Error).message, /the text part is 3000 bytes/, 'counted in UTF-8 bytes');
  const fits = renderMail(input('<p>{{ blob }}</p>', { variables: { blob: 'x'.repeat(1_000) } }), { maxBodyBytes: 2_000, maxMs: 60_000 });
  t.match(fits.html, /^<p>x{1000}<\/p><img /);
  // Any rendering takes more than 0 ms: the time bound is checked, whatever the machine's speed.
  const slow = timed(() => renderMail(input(repeat('<p>x</p>', 100_000)), { maxBodyBytes: MB, maxMs: 0 }));
  t.type(slow.error, RenderLimitExceeded);
  t.match((slow.error as Error).message, /rendering took \d+ ms \(merge tags\), over the 0 ms bound/);
});
