import { CSS_PROPERTIES } from './css.js';
import { KINDS, NODES, moduleType, nodeDecl, type FieldDecl } from './nodes.js';

/**
 * The machine-readable parts of the format description, derived from the declaration
 * (nodes.ts, css.ts): field_types, defaults, skeleton, modules[] and each kind's example.
 * Objects are built by walking the declaration in its written order, so the JSON is identical on
 * every call.
 */

export interface FieldType {
  type: string;
  values?: readonly string[];
  node?: string;
  items?: string;
  required?: true;
  /** Kept for the editor; no effect on the HTML. */
  editor_only?: true;
}

function fieldType(f: FieldDecl): FieldType {
  const base = { ...(f.required ? { required: true as const } : {}), ...(f.editor ? { editor_only: true as const } : {}) };
  switch (f.is) {
    case 'value':
      return { type: f.type, ...(f.values ? { values: f.values } : {}), ...base };
    case 'object':
      return { type: 'object', node: f.node, ...base };
    case 'array':
      return { type: 'array', items: f.items, ...base };
    case 'descriptor':
      return { type: 'object', node: 'descriptor_by_kind.<kind>.nodes.descriptor', ...base };
  }
}

function nodeFields(name: string, kind?: string): Record<string, FieldType> {
  const decl = nodeDecl(name, kind)!;
  const out: Record<string, FieldType> = {};
  for (const [field, f] of Object.entries(decl.fields)) out[field] = fieldType(f);
  return out;
}

export interface FieldTypes {
  nodes: Record<string, Record<string, FieldType>>;
  descriptor_by_kind: Record<string, { type: string; content_key: string; nodes: Record<string, Record<string, FieldType>> }>;
  css: Record<string, { type: string; values?: readonly string[] }>;
}

export function fieldTypes(): FieldTypes {
  const nodes: FieldTypes['nodes'] = {};
  for (const name of Object.keys(NODES)) nodes[name] = nodeFields(name);
  const descriptor_by_kind: FieldTypes['descriptor_by_kind'] = {};
  for (const k of Object.values(KINDS)) {
    const kn: Record<string, Record<string, FieldType>> = {};
    for (const name of Object.keys(k.nodes)) kn[name] = nodeFields(name, k.kind);
    descriptor_by_kind[k.kind] = { type: moduleType(k.kind), content_key: k.content_key, nodes: kn };
  }
  const css: FieldTypes['css'] = {};
  for (const [p, c] of Object.entries(CSS_PROPERTIES)) {
    const cc = c as { type: string; values?: readonly string[] };
    css[p] = { type: cc.type, ...(cc.values ? { values: cc.values } : {}) };
  }
  return { nodes, descriptor_by_kind, css };
}

/**
 * The starting value of a node: every declared default, nested objects included when they have
 * any, required arrays as []. uuids are never defaulted (each new node needs its own).
 */
export function nodeDefaults(name: string, kind?: string): Record<string, unknown> {
  const decl = nodeDecl(name, kind)!;
  const out: Record<string, unknown> = {};
  for (const [field, f] of Object.entries(decl.fields)) {
    if (f.is === 'value') {
      if (f.default !== undefined) out[field] = f.default;
    } else if (f.is === 'object') {
      const inner = nodeDefaults(f.node, kind);
      if (Object.keys(inner).length > 0) out[field] = inner;
    } else if (f.is === 'array') {
      out[field] = [];
    }
  }
  return out;
}

/** A new module of this kind: type plus the descriptor's defaults (the content under content_key). */
export function moduleDefaults(kind: string): Record<string, unknown> {
  const { type: _t, descriptor: _d, ...rest } = nodeDefaults('module');
  return { type: moduleType(kind), ...rest, descriptor: nodeDefaults('descriptor', kind) };
}

export interface Defaults {
  row: Record<string, unknown>;
  column: Record<string, unknown>;
  modules: Record<string, Record<string, unknown>>;
}

export function defaults(): Defaults {
  const modules: Record<string, Record<string, unknown>> = {};
  for (const kind of Object.keys(KINDS)) modules[kind] = moduleDefaults(kind);
  return { row: nodeDefaults('row'), column: nodeDefaults('column'), modules };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** base with over's values laid on top (objects merged key by key, arrays and scalars replaced). */
export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isPlainObject(v) && isPlainObject(out[k]) ? deepMerge(out[k] as Record<string, unknown>, v) : v;
  return out;
}

/** Fixed uuids of the derived documents (skeleton, examples): valid v4 form, distinct. */
const SKELETON_ROW_UUID = '5b0b7a3e-6f1d-4c57-9a43-2d8e6c1f0a01';
const SKELETON_COLUMN_UUID = '5b0b7a3e-6f1d-4c57-9a43-2d8e6c1f0a02';
const EXAMPLE_MODULE_UUID = '5b0b7a3e-6f1d-4c57-9a43-2d8e6c1f0a03';

/** One module of the kind with example content, as it would sit in a column. */
export function exampleModule(kind: string): Record<string, unknown> {
  const m = moduleDefaults(kind);
  return {
    uuid: EXAMPLE_MODULE_UUID,
    ...m,
    descriptor: deepMerge(m.descriptor as Record<string, unknown>, KINDS[kind].example),
  };
}

/**
 * The minimal complete document: page with title, template version, body properties and one
 * row of one full-width column, with no modules yet (add defaults.modules.<kind> with a fresh
 * uuid). It has no head.meta: the subject and preheader that are sent are the template's own
 * fields. Checked without errors or warnings by the tests.
 */
export function skeleton(): Record<string, unknown> {
  const page = nodeDefaults('page');
  const row = { uuid: SKELETON_ROW_UUID, ...nodeDefaults('row'), columns: [{ uuid: SKELETON_COLUMN_UUID, ...nodeDefaults('column') }] };
  return { page: { ...page, rows: [row] } };
}

export interface ModuleListItem {
  kind: string;
  type: string;
  content_key: string;
}

export function moduleList(): ModuleListItem[] {
  return Object.values(KINDS).map((k) => ({ kind: k.kind, type: moduleType(k.kind), content_key: k.content_key }));
}
