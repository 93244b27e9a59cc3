import { join } from 'node:path';
import type { GeneratedSection } from '../config/generated-section.js';
import { writeOrPrint } from '../config/generated-section.js';
import { isMain } from '../config/is-main.js';
import { projectRoot } from '../config/paths.js';
import { buildOpenApi } from './openapi.js';
import { routes } from './routes/index.js';

/**
 * The panel's wire types (web/panel/wire.ts), printed from the OpenAPI document the routes
 * declare, so the browser's code cannot drift from what the server answers:
 * `node dist/api/panel-wire-types.js --write` rewrites the file, and
 * test/panel-wire-types.test.ts fails when it differs from what this prints. A printer of our
 * own rather than openapi-typescript: that one needs TypeScript 5's compiler API (this
 * project builds with TypeScript 7, whose compiler has none), and the panel needs only the
 * JSON Schema subset the declarations use (docs/panel.md, Wire types).
 */
export const PANEL_WIRE_TYPES: GeneratedSection = {
  file: join(projectRoot, 'web', 'panel', 'wire.ts'),
  begin: '// generated from the route declarations by `node dist/api/panel-wire-types.js --write`: edit the declarations, not this file',
  end: '// end of the generated types',
};

type Schema = Record<string, unknown>;

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const key = (name: string) => (IDENTIFIER.test(name) ? name : JSON.stringify(name));
const literal = (value: unknown) => JSON.stringify(value);

/** A description as a JSDoc line (or lines), closing sequences broken. */
function doc(description: unknown, indent: string): string {
  if (typeof description !== 'string' || !description) return '';
  // The document's descriptions are CommonMark (api/openapi.ts): its escapes are not the reader's.
  const text = description.replace(/\\</g, '<').replace(/\*\//g, '*\\/');
  return `${indent}/** ${text} */\n`;
}

/**
 * Where the printer is in the file: the type expression naming this spot (Answers['op']['data']
 * [number]) while the spot has exactly the schema's type (not under an optional property or a
 * nullable array), and the book of the objects the file prints at such spots.
 */
interface Place {
  at: string | undefined;
  /** The nearest named spot at or above this one: never a base of what it holds. */
  within: string;
  book: Book;
}

/**
 * The file is printed twice. The first pass only reads: it books every object at a named spot,
 * in order, with its first spot. The second prints each shape once: an object booked at an
 * earlier spot is named by it (getPanelDomain's answer is Answers['addPanelDomain']; a member of
 * a union, which no spot names, by wherever the file prints it, before or after), and an object
 * that is mostly one printed before is that one with its other properties
 * (`Omit<Answers['listPanelSenders']['data'][number], "is_sandbox"> & { domain_created: ... }`).
 */
interface Book {
  final: boolean;
  first: Map<string, string>;
  objects: Booked[];
  index: Map<string, number>;
}

interface Booked {
  at: string;
  /** Each property's schema and whether it is required, by name. */
  props: Map<string, string>;
  extra: string;
}

const at = (place: Place | undefined, step: string): Place | undefined => place && (place.at ? { ...place, at: place.at + step, within: place.at + step } : place);
const unnamed = (place: Place | undefined): Place | undefined => place && { ...place, at: undefined };

/** An object schema as the book knows it: its own description is the parent's line, not its shape. */
function booked(s: Schema, where: string): Booked {
  const { description: _description, ...shape } = s;
  const required = new Set((s.required ?? []) as string[]);
  const props = new Map(Object.entries((s.properties ?? {}) as Record<string, unknown>).map(([n, p]) => [n, JSON.stringify([p, required.has(n)])]));
  return { at: where, props, extra: JSON.stringify(shape.additionalProperties ?? null) };
}

/** A shape worth naming: an object of more than one property. */
const nameable = (s: Schema) => s.type === 'object' && Object.keys((s.properties ?? {}) as object).length > 1;

const shapeKey = (s: Schema) => {
  const { description: _description, ...shape } = s;
  return JSON.stringify(shape);
};

/**
 * The earlier object sharing most of this one's properties (at least four, and more than the two
 * have apart): the type is that one without what differs, with the rest.
 */
function fromEarlier(s: Schema, indent: string, place: Place): string | undefined {
  const book = place.book;
  const me = booked(s, place.at ?? '');
  const before = place.at === undefined ? book.objects.length : (book.index.get(place.at) ?? book.objects.length);
  let best: { base: Booked; shared: string[] } | undefined;
  for (const base of book.objects.slice(0, before)) {
    if (base.extra !== me.extra || place.within.startsWith(base.at)) continue;
    const shared = [...me.props].filter(([n, v]) => base.props.get(n) === v).map(([n]) => n);
    // What differs (theirs alone and mine alone) is less than what is the same: one thing, not two alike.
    const differ = base.props.size + me.props.size - 2 * shared.length;
    if (shared.length >= 4 && shared.length > differ && shared.length > (best?.shared.length ?? 0)) best = { base, shared };
  }
  if (!best) return undefined;
  const shared = new Set(best.shared);
  const dropped = [...best.base.props.keys()].filter((n) => !shared.has(n));
  const base = dropped.length ? `Omit<${best.base.at}, ${dropped.map(literal).join(' | ')}>` : best.base.at;
  const rest = Object.entries((s.properties ?? {}) as Record<string, unknown>).filter(([n]) => !shared.has(n));
  if (!rest.length) return base;
  const restSchema = { ...s, properties: Object.fromEntries(rest), required: ((s.required ?? []) as string[]).filter((n) => !shared.has(n)) };
  return `${base} & ${objectType(restSchema, indent, place)}`;
}

/** The name of this object's shape where the file states it elsewhere, or undefined to print it here. */
function named(s: Schema, indent: string, place: Place): string | undefined {
  const book = place.book;
  const key = shapeKey(s);
  if (!book.final) {
    if (place.at && !book.first.has(key)) book.first.set(key, place.at);
    if (place.at && !book.index.has(place.at)) {
      book.index.set(place.at, book.objects.length);
      book.objects.push(booked(s, place.at));
    }
    return undefined;
  }
  const first = book.first.get(key);
  if (first && first !== place.at) return first;
  return fromEarlier(s, indent, place);
}

/** The TypeScript type a JSON Schema (the subset the declarations use) describes. */
export function typeOf(schema: unknown, indent = '', place?: Place): string {
  if (schema === true || schema === undefined) return 'unknown';
  if (schema === false) return 'never';
  const s = schema as Schema;
  if (place && nameable(s)) {
    const name = named(s, indent, place);
    if (name) return name;
  }
  if ('const' in s) return literal(s.const);
  if (Array.isArray(s.enum)) return s.enum.map(literal).join(' | ');
  for (const [k, join] of [['oneOf', ' | '], ['anyOf', ' | '], ['allOf', ' & ']] as const) {
    if (Array.isArray(s[k])) {
      const parts = (s[k] as unknown[]).map((part) => typeOf({ ...withoutCombinator(s, k), ...(part as Schema) }, indent, unnamed(place)));
      // An object's braces already bound it in a union; anything else composite is parenthesized.
      const bare = (p: string) => !/ [|&] /.test(p) || (join === ' | ' && p.startsWith('{') && p.endsWith('}'));
      return parts.map((p) => (bare(p) ? p : `(${p})`)).join(join);
    }
  }
  const types = Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === 'string' ? [s.type] : [];
  if (!types.length) return s.properties || s.additionalProperties !== undefined ? objectType(s, indent, place) : 'unknown';
  // Under a union of types (a nullable object), no expression names the object alone.
  const inner = types.length === 1 ? place : unnamed(place);
  return types.map((t) => single(t, s, indent, inner)).join(' | ');
}

function withoutCombinator(s: Schema, k: string): Schema {
  const { [k]: _dropped, description: _description, ...rest } = s;
  return rest;
}

function single(type: string, s: Schema, indent: string, place: Place | undefined): string {
  switch (type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      const item = typeOf(s.items, indent, at(place, '[number]'));
      return /^[\w.]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
    }
    case 'object':
      return objectType(s, indent, place);
    default:
      return 'unknown';
  }
}

function objectType(s: Schema, indent: string, place?: Place): string {
  const props = Object.entries((s.properties ?? {}) as Record<string, unknown>);
  const required = new Set((s.required ?? []) as string[]);
  const extra = s.additionalProperties;
  const index = extra && typeof extra === 'object' ? typeOf(extra, indent, unnamed(place)) : !props.length && extra !== false ? 'unknown' : undefined;
  if (!props.length) return index ? `Record<string, ${index}>` : 'Record<string, never>';
  const inner = indent + '  ';
  const lines = props.map(([name, p]) => {
    // An optional property's type is the schema's or undefined: not a place to name the schema's.
    const there = required.has(name) ? at(place, `[${literal(name)}]`) : unnamed(place);
    return `${doc((p as Schema).description, inner)}${inner}${key(name)}${required.has(name) ? '' : '?'}: ${typeOf(p, inner, there)};\n`;
  });
  const body = `{\n${lines.join('')}${indent}}`;
  return index && index !== 'unknown' ? `${body} & Record<string, ${index}>` : body;
}

interface Operation {
  operationId: string;
  summary?: string;
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

/** The panel's operations (/v1/private) of the document, in declaration order. */
function panelOperations(): Operation[] {
  const paths = buildOpenApi(routes, 'http://localhost').paths as Record<string, Record<string, Operation>>;
  return Object.entries(paths)
    .filter(([path]) => path.startsWith('/v1/private/'))
    .flatMap(([, methods]) => Object.values(methods));
}

/** The JSON schema of an answer or a body, if it is JSON. */
const jsonSchema = (content: Record<string, { schema?: unknown }> | undefined) => content?.['application/json']?.schema;

function member(op: Operation, schema: unknown, where: 'Answers' | 'Bodies', book: Book): string {
  return `${doc(op.summary, '  ')}  ${op.operationId}: ${typeOf(schema, '  ', { at: `${where}[${literal(op.operationId)}]`, within: `${where}[${literal(op.operationId)}]`, book })};\n`;
}

/** The text of web/panel/wire.ts between its markers. */
export function panelWireTypes(): string {
  const ops = panelOperations();
  const book: Book = { final: false, first: new Map(), objects: [], index: new Map() };
  const print = () => {
    const answers = ops.flatMap((op) => {
      const success = Object.entries(op.responses).find(([status]) => status.startsWith('2'));
      const schema = success ? jsonSchema(success[1].content) : undefined;
      return schema === undefined ? [] : [member(op, schema, 'Answers', book)];
    });
    const bodies = ops.flatMap((op) => {
      const schema = jsonSchema(op.requestBody?.content);
      return schema === undefined ? [] : [member(op, schema, 'Bodies', book)];
    });
    return { answers, bodies };
  };
  print();
  book.final = true;
  const { answers, bodies } = print();
  return [
    '/** The JSON each panel operation answers on success, by its operationId. */',
    `export interface Answers {\n${answers.join('')}}`,
    '',
    '/** The JSON body each panel operation takes, by its operationId. */',
    `export interface Bodies {\n${bodies.join('')}}`,
  ].join('\n');
}

if (isMain(import.meta.url)) writeOrPrint(PANEL_WIRE_TYPES, panelWireTypes());
