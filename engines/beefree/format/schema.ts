import { KINDS, NODES, nodeDecl, type FieldDecl } from './nodes.js';
import { VALUE_TYPES } from './value-types.js';

/**
 * The JSON Schema of the document, derived from the declaration (nodes.ts). It checks JSON types
 * and required fields only: unknown keys are allowed everywhere (no additionalProperties), and
 * whether a text reads as a colour or a length is the renderer's business (it falls back to the
 * default), never a reason to refuse a document an editor produced. null in an optional field
 * means "absent".
 *
 * The module descriptor depends on the module's kind, so the document schema stops at
 * `descriptor: object` and each kind has its own descriptor schema (descriptorSchema), applied by
 * the check to each module of a known kind.
 */
export type JsonSchema = Record<string, unknown>;

function fieldSchema(f: FieldDecl, kind: string | undefined): JsonSchema {
  const nullable = !f.required;
  switch (f.is) {
    case 'value': {
      const json: string[] = [...VALUE_TYPES[f.type].json];
      if (nullable) json.push('null');
      return { type: json.length === 1 ? json[0] : json };
    }
    case 'object':
      return { ...nodeSchema(f.node, kind), ...(nullable ? { type: ['object', 'null'] } : {}) };
    case 'array':
      return { type: nullable ? ['array', 'null'] : 'array', items: nodeSchema(f.items, kind) };
    case 'descriptor':
      return { type: 'object' };
  }
}

function nodeSchema(name: string, kind?: string): JsonSchema {
  const decl = nodeDecl(name, kind);
  if (!decl) throw new Error(`template format: node ${name} is not declared`);
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [field, f] of Object.entries(decl.fields)) {
    properties[field] = fieldSchema(f, kind);
    if (f.is === 'value') for (const a of f.aliases ?? []) properties[a] ??= fieldSchema({ ...f, aliases: [] }, kind);
    if (f.required) required.push(field);
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
}

/** The whole document (descriptors checked per kind, see descriptorSchema). */
export function documentSchema(): JsonSchema {
  return { $id: 'cartero:template-document', ...nodeSchema('document') };
}

/** The descriptor of a module of this kind (content under its key or an older alias). */
export function descriptorSchema(kind: string): JsonSchema {
  const k = KINDS[kind];
  if (!k) throw new Error(`template format: unknown kind ${kind}`);
  const s = nodeSchema('descriptor', kind);
  const props = s.properties as Record<string, JsonSchema>;
  for (const alias of k.content_aliases ?? []) props[alias] ??= props[k.content_key];
  return { $id: `cartero:template-descriptor-${kind}`, ...s };
}

// The structural node names, exported for the derivations that walk them in a stable order.
export const STRUCTURAL_NODES = Object.keys(NODES);
