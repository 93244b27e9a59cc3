import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { Ajv } from 'ajv';
import { checkDocument } from '../engines/beefree/check/index.js';
import { processDocument } from '../engines/beefree/document.js';
import { CSS_PROPERTIES } from '../engines/beefree/format/css.js';
import { formatDescription, formatDescriptionJson, formatEtag, moduleDetail } from '../engines/beefree/format/description.js';
import { IGNORED_KINDS, KINDS, NODES, PREFIX, UNSUPPORTED_KINDS, columnWidths, nodeDecl, resolveNode, type NodeDecl } from '../engines/beefree/format/nodes.js';
import { RULES } from '../engines/beefree/format/rules.js';
import { descriptorSchema, documentSchema } from '../engines/beefree/format/schema.js';
import { VALUE_TYPES } from '../engines/beefree/format/value-types.js';
import { projectRoot } from '../config/paths.js';

/**
 * The format description (GET /v1/mail-templates/format and /format/modules/{kind}) and the
 * one declaration it is derived from (engines/beefree/format/nodes.ts): every derived output
 * agrees with the declaration, the skeleton and every kind's example check clean, and the
 * description is the same bytes on every call.
 */

const LANGS = ['es', 'en'] as const;
const kinds = Object.keys(KINDS);

t.test('identical bytes on every call, and a stable ETag per language', async (t) => {
  for (const lang of LANGS) {
    const a = formatDescriptionJson(lang);
    t.equal(formatDescriptionJson(lang), a, `${lang}: same JSON string`);
    t.equal(JSON.stringify(formatDescription(lang)), a, `${lang}: the object serialises to the same bytes`);
    t.equal(JSON.stringify(formatDescription(lang)), JSON.stringify(formatDescription(lang)), `${lang}: two objects, same bytes`);
    t.match(formatEtag(lang), /^"[A-Za-z0-9_-]{27}"$/, `${lang}: a quoted strong ETag`);
    t.equal(formatEtag(lang), formatEtag(lang));
  }
  t.not(formatEtag('es'), formatEtag('en'), 'the two texts have their own ETag');
  // A caller mutating its copy changes nothing for the next one.
  const d = formatDescription('es');
  (d.skeleton as { page: { title: string } }).page.title = 'changed';
  t.equal(JSON.stringify(formatDescription('es')), formatDescriptionJson('es'));
});

t.test('es and en differ only in the format text', async (t) => {
  const es = formatDescription('es');
  const en = formatDescription('en');
  t.same(Object.keys(es), ['format', 'field_types', 'defaults', 'skeleton', 'modules']);
  t.not(es.format, en.format);
  const { format: _a, ...esRest } = es;
  const { format: _b, ...enRest } = en;
  t.equal(JSON.stringify(esRest), JSON.stringify(enRest));
  t.match(es.format, /^# Formato del documento/);
  t.match(en.format, /^# Design document format/);
});

t.test('modules[] lists every declared kind with its Beefree type and content key', async (t) => {
  const d = formatDescription('es');
  t.same(
    d.modules.map((m) => m.kind),
    kinds,
  );
  t.same([...kinds].sort(), ['button', 'divider', 'heading', 'html', 'icons', 'image', 'list', 'menu', 'paragraph', 'social', 'spacer', 'table', 'text', 'video'].sort());
  for (const m of d.modules) {
    t.equal(m.type, `${PREFIX}-modules-${m.kind}`, `${m.kind}: type`);
    t.equal(m.content_key, KINDS[m.kind].content_key, `${m.kind}: content key`);
  }
  const key = Object.fromEntries(d.modules.map((m) => [m.kind, m.content_key]));
  t.equal(key.social, 'iconsList');
  t.equal(key.icons, 'iconsList');
  t.equal(key.menu, 'menuItemsList');
  t.equal(PREFIX, 'mailup-bee-newsletter');
  for (const k of [...UNSUPPORTED_KINDS, ...IGNORED_KINDS]) t.notOk(Object.hasOwn(KINDS, k), `${k} is not a published kind`);
});

t.test('field_types: every node, every kind, every CSS property, Beefree names', async (t) => {
  const ft = formatDescription('en').field_types;
  t.same(Object.keys(ft), ['nodes', 'descriptor_by_kind', 'css']);
  t.same(Object.keys(ft.nodes), Object.keys(NODES));
  t.same(Object.keys(ft.descriptor_by_kind), kinds);
  t.same(Object.keys(ft.css), Object.keys(CSS_PROPERTIES));
  for (const [name, decl] of Object.entries(NODES)) {
    t.same(Object.keys(ft.nodes[name]), Object.keys(decl.fields), `${name}: its fields`);
    for (const [field, f] of Object.entries(decl.fields)) {
      const out = ft.nodes[name][field];
      if (f.is === 'value') t.equal(out.type, f.type, `${name}.${field}`);
      if (f.is === 'object') t.same([out.type, out.node], ['object', f.node], `${name}.${field}`);
      if (f.is === 'array') t.same([out.type, out.items], ['array', f.items], `${name}.${field}`);
      t.equal(out.required === true, f.required === true, `${name}.${field} required`);
      // Every node a field refers to is itself described.
      if (f.is === 'object') t.ok(ft.nodes[f.node], `${f.node} is described`);
      if (f.is === 'array') t.ok(ft.nodes[f.items], `${f.items} is described`);
    }
  }
  for (const k of kinds) {
    const d = ft.descriptor_by_kind[k];
    t.equal(d.content_key, KINDS[k].content_key);
    t.same(Object.keys(d.nodes), Object.keys(KINDS[k].nodes));
    t.ok(d.nodes.descriptor[KINDS[k].content_key], `${k}: the descriptor holds its content key`);
    for (const fields of Object.values(d.nodes)) {
      for (const f of Object.values(fields)) if (f.node && f.type === 'object') t.ok(d.nodes[f.node], `${k}: ${f.node} is described`);
    }
  }
  for (const [p, c] of Object.entries(ft.css)) t.ok(Object.hasOwn(VALUE_TYPES, c.type), `${p}: a declared value type`);
  t.same(ft.nodes.column['grid-columns'], { type: 'integer' });
  t.ok(ft.nodes['row.content.computedStyle'].rowColStackOnMobile);
  t.ok(ft.nodes['row.content.computedStyle'].rowReverseColStackOnMobile);
  t.same(ft.descriptor_by_kind.social.nodes.iconsList.icons, { type: 'array', items: 'iconsList.icons[]' });
  t.same(ft.descriptor_by_kind.menu.nodes.menuItemsList.items, { type: 'array', items: 'menuItemsList.items[]' });
  t.same(ft.css['text-align'], { type: 'enum', values: ['left', 'center', 'right', 'justify'] });
  t.same(ft.css['background-color'], { type: 'color' });
});

/** Every declared default of a node is at its place in the derived object (and nothing else is). */
function checkDefaults(t: Test, where: string, decl: NodeDecl, value: Record<string, unknown>, kind?: string): void {
  for (const [field, f] of Object.entries(decl.fields)) {
    if (f.is === 'value') {
      if (f.default !== undefined) t.equal(value[field], f.default, `${where}.${field}`);
      else t.notOk(field in value, `${where}.${field} has no default`);
    } else if (f.is === 'object') {
      if (field in value) checkDefaults(t, `${where}.${field}`, nodeDecl(f.node, kind)!, value[field] as Record<string, unknown>, kind);
    } else if (f.is === 'array') {
      t.same(value[field], [], `${where}.${field} starts empty`);
    }
  }
  for (const k of Object.keys(value)) t.ok(k in decl.fields, `${where}.${k} is declared`);
}

t.test('defaults: row, column and each kind, from the declared defaults only', async (t) => {
  const d = formatDescription('es').defaults;
  t.same(Object.keys(d), ['row', 'column', 'modules']);
  t.same(Object.keys(d.modules), kinds);
  checkDefaults(t, 'row', NODES.row, d.row);
  checkDefaults(t, 'column', NODES.column, d.column);
  t.equal(d.column['grid-columns'], 12);
  t.notOk('uuid' in d.row || 'uuid' in d.column, 'no uuid: each new node needs its own');
  for (const k of kinds) {
    const m = d.modules[k] as { type: string; descriptor: Record<string, unknown> };
    t.equal(m.type, `${PREFIX}-modules-${k}`);
    t.notOk('uuid' in m);
    t.ok(m.descriptor[KINDS[k].content_key], `${k}: content under ${KINDS[k].content_key}`);
    checkDefaults(t, `modules.${k}.descriptor`, KINDS[k].nodes.descriptor, m.descriptor, k);
  }
});

t.test('the JSON Schema is the declaration: required fields, open objects', async (t) => {
  const schema = documentSchema() as { required: string[]; properties: Record<string, any> };
  t.same(schema.required, ['page']);
  t.same(schema.properties.page.required, ['rows']);
  const row = schema.properties.page.properties.rows.items;
  t.same(row.required, ['columns']);
  t.same(row.properties.columns.items.required, ['modules']);
  t.same(row.properties.columns.items.properties.modules.items.required, ['type', 'descriptor']);
  t.notOk(JSON.stringify(schema).includes('additionalProperties'), 'no additionalProperties anywhere: unknown keys are allowed');
  const ajv = new Ajv({ strict: true, strictTypes: false });
  const validate = ajv.compile(documentSchema());
  const doc = {
    comments: {},
    page: {
      anything: [1, 2],
      rows: [{ metadata: { x: 1 }, columns: [{ 'grid-columns': 12, translations: {}, modules: [{ type: 'mailup-bee-newsletter-modules-divider', descriptor: { hoverStyle: {} }, synced: true }] }] }],
    },
    beautifyHtmlEnabled: true,
  };
  t.ok(validate(doc), 'unknown keys at every level validate');
  t.notOk(validate({ page: { rows: {} } }), 'rows must be an array');
  for (const k of kinds) t.ok(ajv.compile(descriptorSchema(k))(formatDescription('es').defaults.modules[k].descriptor as object), `${k}: its defaults fit its descriptor schema`);
});

t.test('the skeleton checks without any error or warning', async (t) => {
  const d = formatDescription('en');
  const sk = d.skeleton as { page: Record<string, unknown> };
  t.type(sk.page.title, 'string');
  t.type(sk.page.body, 'object');
  t.ok(Array.isArray(sk.page.rows));
  const r = await processDocument(d.skeleton, { subject: 'Hello', preheader: 'Read on' });
  t.same(r.errors, []);
  t.same(
    r.findings.filter((f) => f.level !== 'suggestion'),
    [],
    'no warnings',
  );
  t.same(r.findings, [], 'and with subject and preheader, no suggestions either');
  t.type(r.html, 'string');
  // Without them, the only findings are the two suggestions about the template's own fields.
  const bare = await processDocument(d.skeleton, { subject: null, preheader: null });
  t.same(bare.errors, []);
  t.same(
    bare.findings.map((f) => [f.level, f.rule, f.pointer, f.uuid]),
    [
      ['suggestion', 'subject_missing', '', null],
      ['suggestion', 'preheader_missing', '', null],
    ],
  );
});

t.test('module detail: fields, defaults and an example that checks clean, for every kind', async (t) => {
  const sk = formatDescription('es').skeleton as any;
  for (const k of kinds) {
    const m = moduleDetail(k)!;
    t.equal(m.kind, k);
    t.equal(m.type, `${PREFIX}-modules-${k}`);
    t.equal(m.content_key, KINDS[k].content_key);
    t.same(m.fields, formatDescription('es').field_types.descriptor_by_kind[k].nodes);
    t.same(m.defaults, formatDescription('es').defaults.modules[k]);
    t.type((m.example as { uuid: string }).uuid, 'string');
    t.not(moduleDetail(k, 'en')!.description, m.description, `${k}: description in the language asked`);
    const doc = structuredClone(sk);
    doc.page.rows[0].columns[0].modules.push(m.example);
    const r = await processDocument(doc, { subject: 's', preheader: 'p' });
    t.same(r.errors, [], `${k}: example without errors`);
    t.same(
      r.findings.filter((f) => f.level !== 'suggestion').map((f) => f.rule),
      [],
      `${k}: example without warnings`,
    );
    t.ok(r.html, `${k}: example renders`);
  }
  for (const unknown of ['form', 'carousel', 'empty', 'nope', '__proto__', 'constructor', '']) t.equal(moduleDetail(unknown), undefined, `${JSON.stringify(unknown)}: undefined`);
});

t.test('the Markdown names every kind, type, node, value type, CSS property, rule and limit', async (t) => {
  for (const lang of LANGS) {
    const md = formatDescription(lang).format;
    for (const k of kinds) {
      t.ok(md.includes(`\`${PREFIX}-modules-${k}\``), `${lang}: type of ${k}`);
      t.ok(md.includes(`\`${KINDS[k].content_key}\``), `${lang}: content key of ${k}`);
    }
    for (const k of UNSUPPORTED_KINDS) t.ok(md.includes(`\`${k}\``), `${lang}: unsupported ${k}`);
    for (const n of Object.keys(NODES)) t.ok(md.includes(`\`${n}\``), `${lang}: node ${n}`);
    for (const v of Object.keys(VALUE_TYPES)) t.ok(md.includes(`| ${v} |`), `${lang}: value type ${v}`);
    for (const p of Object.keys(CSS_PROPERTIES)) t.ok(md.includes(`\`${p}\``), `${lang}: css ${p}`);
    for (const [rule, r] of Object.entries(RULES)) t.ok(md.includes(`| \`${rule}\` | ${r.level} |`), `${lang}: rule ${rule} with its level`);
    for (const n of ['262144', '524288', '104448']) t.ok(md.includes(n), `${lang}: limit ${n}`);
    for (const w of ['grid-columns', 'rowColStackOnMobile', 'uuid', 'error', 'warning', 'suggestion']) t.ok(md.includes(w), `${lang}: mentions ${w}`);
  }
});

t.test('accessors the renderer reads: resolved fields and column widths', async (t) => {
  t.same(resolveNode('column.style', { 'background-color': '#123456', 'padding-top': null, junk: 1 }), {
    'background-color': '#123456',
    'padding-top': '5px',
    'padding-right': '0px',
    'padding-bottom': '5px',
    'padding-left': '0px',
  });
  t.equal(resolveNode('paragraph', { text: '<p>legacy</p>' }, 'paragraph').html, '<p>legacy</p>', 'an older field name is read');
  t.same(columnWidths([{ 'grid-columns': 6 }, { 'grid-columns': 6 }]), [50, 50]);
  t.same(columnWidths([{ 'grid-columns': 12 }, { 'grid-columns': 12 }]), [50, 50], '24: proportional');
  t.same(columnWidths([{}]), [100], 'missing: the whole row');
  t.same(columnWidths([{ 'grid-columns': 4 }, {}, {}]).map((w) => Math.round(w * 1000) / 1000), [33.333, 33.333, 33.333], 'the missing ones share what is left');
  t.same(checkDocument({ page: { rows: [] } }), [], 'the smallest document is valid');
});

t.test('docs/templates.md lists every rule with its level', async (t) => {
  const lines = readFileSync(join(projectRoot, 'docs', 'templates.md'), 'utf8').split('\n');
  for (const [rule, r] of Object.entries(RULES)) {
    const row = lines.find((l) => l.startsWith('|') && l.includes(`\`${rule}\``));
    t.ok(row, `${rule} has a row`);
    t.ok(row?.includes(`| ${r.level} |`), `${rule}: ${r.level}`);
    if ('code' in r) t.ok(row?.includes(`| ${r.code} |`), `${rule}: ${r.code}`);
  }
});
