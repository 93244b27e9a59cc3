import { createHash } from 'node:crypto';
import { defaults, exampleModule, fieldTypes, moduleList, nodeDefaults, skeleton, type Defaults, type FieldTypes, type ModuleListItem } from './derive.js';
import { formatMarkdown, type Lang } from './markdown.js';
import { KINDS, moduleType } from './nodes.js';

/**
 * GET /v1/mail-templates/format and /format/modules/{kind}: built once per language from the
 * declaration and kept (it changes only when the code does), so every call returns the same
 * bytes and the ETag is stable across instances and restarts.
 */
export type { Lang } from './markdown.js';

export interface FormatDescription {
  format: string;
  field_types: FieldTypes;
  defaults: Defaults;
  skeleton: Record<string, unknown>;
  modules: ModuleListItem[];
}

const built = new Map<Lang, { description: FormatDescription; json: string; etag: string }>();

function build(lang: Lang) {
  let b = built.get(lang);
  if (!b) {
    const description: FormatDescription = {
      format: formatMarkdown(lang),
      field_types: fieldTypes(),
      defaults: defaults(),
      skeleton: skeleton(),
      modules: moduleList(),
    };
    const json = JSON.stringify(description);
    b = { description, json, etag: `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"` };
    built.set(lang, b);
  }
  return b;
}

/** The format description in one language (lang changes only `format`). A fresh copy each call. */
export function formatDescription(lang: Lang): FormatDescription {
  return JSON.parse(build(lang).json) as FormatDescription;
}

/** The description serialised, byte-identical on every call (what the route can send as is). */
export function formatDescriptionJson(lang: Lang): string {
  return build(lang).json;
}

/** A strong ETag of formatDescriptionJson(lang), quoted as the header wants it. */
export function formatEtag(lang: Lang): string {
  return build(lang).etag;
}

export interface ModuleDetail {
  kind: string;
  type: string;
  content_key: string;
  description: string;
  /** The descriptor's node types and their fields (as field_types.descriptor_by_kind.<kind>.nodes). */
  fields: FieldTypes['descriptor_by_kind'][string]['nodes'];
  /** Starting values of a new item in the module's lists (icons, menu items, table rows and cells). */
  item_defaults: Record<string, Record<string, unknown>>;
  /** A new module of the kind (defaults.modules.<kind>). */
  defaults: Record<string, unknown>;
  /** A complete module with example content and a uuid, ready to put in a column. */
  example: Record<string, unknown>;
}

/** One kind in detail; undefined for a kind the format does not publish. */
export function moduleDetail(kind: string, lang: Lang = 'es'): ModuleDetail | undefined {
  if (!Object.hasOwn(KINDS, kind)) return undefined;
  const k = KINDS[kind];
  const d = build(lang).description;
  const item_defaults: Record<string, Record<string, unknown>> = {};
  for (const name of Object.keys(k.nodes)) if (name.endsWith('[]')) item_defaults[name] = nodeDefaults(name, kind);
  return JSON.parse(
    JSON.stringify({
      kind,
      type: moduleType(kind),
      content_key: k.content_key,
      description: k.doc[lang],
      fields: d.field_types.descriptor_by_kind[kind].nodes,
      item_defaults,
      defaults: d.defaults.modules[kind],
      example: exampleModule(kind),
    }),
  ) as ModuleDetail;
}
