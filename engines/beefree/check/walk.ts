import { KINDS, isRecord, kindOfType, moduleContent, nodeDecl, type NodeDecl, type ValueField } from '../format/nodes.js';
import { childPointer, ownUuid } from './pointer.js';

/**
 * Walks a document along the declaration (format/nodes.ts): every declared node present in the
 * document, and every declared value field of it, with its JSON Pointer and the uuid of the
 * nearest node that has one. The checks that depend on field types (links, HTML, alt texts,
 * CSS values) are written against this walk, so a field added to the declaration is checked
 * without touching them. Values of the wrong JSON type are passed as they are (the schema check
 * reports those); nodes of the wrong type are not entered.
 */
export interface NodeVisit {
  /** Node type name (a key of NODES, or of KINDS[kind].nodes inside a descriptor). */
  name: string;
  decl: NodeDecl;
  value: Record<string, unknown>;
  pointer: string;
  uuid: string | null;
  /** The module kind, inside a module's descriptor. */
  kind?: string;
  /** The enclosing structural nodes (for inherited colours and the like). */
  path: NodePath;
}

export interface NodePath {
  row?: Record<string, unknown>;
  column?: Record<string, unknown>;
  module?: Record<string, unknown>;
  modulePointer?: string;
}

export interface ValueVisit {
  node: NodeVisit;
  field: string;
  decl: ValueField;
  /**
   * The value (an alias's when the field itself is absent). Absent fields are visited only when
   * the declaration expects something of them (`expect`), with value undefined.
   */
  value: unknown;
  /** Where the value is (the alias's key when read from an alias); the field's place when absent. */
  pointer: string;
}

export interface Visitor {
  node?(v: NodeVisit): void;
  value?(v: ValueVisit): void;
}

export function walkDocument(doc: unknown, visitor: Visitor): void {
  walkNode(doc, 'document', undefined, '', null, {}, visitor);
}

function walkNode(
  value: unknown,
  name: string,
  kind: string | undefined,
  pointer: string,
  inheritedUuid: string | null,
  parentPath: NodePath,
  visitor: Visitor,
): void {
  if (!isRecord(value)) return;
  const decl = nodeDecl(name, kind);
  if (!decl) return;
  const uuid = ownUuid(value) ?? inheritedUuid;
  const path: NodePath =
    kind === undefined && name === 'row'
      ? { row: value }
      : kind === undefined && name === 'column'
        ? { ...parentPath, column: value }
        : kind === undefined && name === 'module'
          ? { ...parentPath, module: value, modulePointer: pointer }
          : parentPath;
  const visit: NodeVisit = { name, decl, value, pointer, uuid, ...(kind !== undefined ? { kind } : {}), path };
  visitor.node?.(visit);
  for (const [field, f] of Object.entries(decl.fields)) {
    const v = value[field];
    switch (f.is) {
      case 'value': {
        let at: string | undefined;
        let read = v;
        if (read === undefined || read === null) {
          for (const a of f.aliases ?? []) {
            if (value[a] !== undefined && value[a] !== null) {
              read = value[a];
              at = childPointer(pointer, a);
              break;
            }
          }
        }
        // An absent field matters only to the checks that expect one (a link, an alt text);
        // style nodes declare many properties a document leaves out, so skip those early.
        if ((read === undefined || read === null) && f.expect === undefined) break;
        if (visitor.value) visitor.value({ node: visit, field, decl: f, value: read === null ? undefined : read, pointer: at ?? childPointer(pointer, field) });
        break;
      }
      case 'object':
        if (isRecord(v)) walkNode(v, f.node, kind, childPointer(pointer, field), uuid, path, visitor);
        break;
      case 'array':
        if (Array.isArray(v)) {
          const fp = childPointer(pointer, field);
          v.forEach((item, i) => walkNode(item, f.items, kind, childPointer(fp, i), uuid, path, visitor));
        }
        break;
      case 'descriptor': {
        const k = kindOfType(value.type);
        if (k === undefined || !Object.hasOwn(KINDS, k)) break;
        const fp = childPointer(pointer, field);
        walkNode(v, 'descriptor', k, fp, uuid, path, visitor);
        // Content under an older key (a paragraph's under `text`): walked as the content it is.
        const c = moduleContent(k, v);
        if (c && c.key !== KINDS[k].content_key) walkNode(c.content, KINDS[k].content_key, k, childPointer(fp, c.key), uuid, path, visitor);
        break;
      }
    }
  }
}

/** Every module of the document (rows/columns/modules that are arrays of objects), in order. */
export function eachModule(
  doc: unknown,
  fn: (m: { module: Record<string, unknown>; pointer: string; uuid: string | null; row: Record<string, unknown>; column: Record<string, unknown> }) => void,
): void {
  walkDocument(doc, {
    node(v) {
      if (v.name === 'module' && v.kind === undefined) fn({ module: v.value, pointer: v.pointer, uuid: v.uuid, row: v.path.row!, column: v.path.column! });
    },
  });
}
