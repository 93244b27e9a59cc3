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
 * nullable array), and the objects printed so far by their schema. An object whose schema was
 * printed before is named by where it was printed (getPanelDomain's answer is
 * Answers['addPanelDomain']), so the file states each shape once.
 */
interface Place {
  at: string | undefined;
  printed: Map<string, string>;
}

const at = (place: Place | undefined, step: string): Place | undefined => place && { ...place, at: place.at && place.at + step };

/** The TypeScript type a JSON Schema (the subset the declarations use) describes. */
export function typeOf(schema: unknown, indent = '', place?: Place): string {
  if (schema === true || schema === undefined) return 'unknown';
  if (schema === false) return 'never';
  const s = schema as Schema;
  if (place && s.type === 'object' && Object.keys((s.properties ?? {}) as object).length > 1) {
    const key = JSON.stringify(s);
    const before = place.printed.get(key);
    if (before) return before;
    if (place.at) place.printed.set(key, place.at);
  }
  if ('const' in s) return literal(s.const);
  if (Array.isArray(s.enum)) return s.enum.map(literal).join(' | ');
  for (const [k, join] of [['oneOf', ' | '], ['anyOf', ' | '], ['allOf', ' & ']] as const) {
    if (Array.isArray(s[k])) {
      const parts = (s[k] as unknown[]).map((part) => typeOf({ ...withoutCombinator(s, k), ...(part as Schema) }, indent, place && { ...place, at: undefined }));
      // An object's braces already bound it in a union; anything else composite is parenthesized.
      const bare = (p: string) => !/ [|&] /.test(p) || (join === ' | ' && p.startsWith('{') && p.endsWith('}'));
      return parts.map((p) => (bare(p) ? p : `(${p})`)).join(join);
    }
  }
  const types = Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === 'string' ? [s.type] : [];
  if (!types.length) return s.properties || s.additionalProperties !== undefined ? objectType(s, indent, place) : 'unknown';
  // Under a union of types (a nullable object), no expression names the object alone.
  const inner = types.length === 1 ? place : place && { ...place, at: undefined };
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
  const index = extra && typeof extra === 'object' ? typeOf(extra, indent, place && { ...place, at: undefined }) : !props.length && extra !== false ? 'unknown' : undefined;
  if (!props.length) return index ? `Record<string, ${index}>` : 'Record<string, never>';
  const inner = indent + '  ';
  const lines = props.map(([name, p]) => {
    // An optional property's type is the schema's or undefined: not a place to name the schema's.
    const there = required.has(name) ? at(place, `[${literal(name)}]`) : place && { ...place, at: undefined };
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

function member(op: Operation, schema: unknown, where: 'Answers' | 'Bodies', printed: Map<string, string>): string {
  return `${doc(op.summary, '  ')}  ${op.operationId}: ${typeOf(schema, '  ', { at: `${where}[${literal(op.operationId)}]`, printed })};\n`;
}

/** The text of web/panel/wire.ts between its markers. */
export function panelWireTypes(): string {
  const ops = panelOperations();
  const printed = new Map<string, string>();
  const answers = ops.flatMap((op) => {
    const success = Object.entries(op.responses).find(([status]) => status.startsWith('2'));
    const schema = success ? jsonSchema(success[1].content) : undefined;
    return schema === undefined ? [] : [member(op, schema, 'Answers', printed)];
  });
  const bodies = ops.flatMap((op) => {
    const schema = jsonSchema(op.requestBody?.content);
    return schema === undefined ? [] : [member(op, schema, 'Bodies', printed)];
  });
  return [
    '/** The JSON each panel operation answers on success, by its operationId. */',
    `export interface Answers {\n${answers.join('')}}`,
    '',
    '/** The JSON body each panel operation takes, by its operationId. */',
    `export interface Bodies {\n${bodies.join('')}}`,
  ].join('\n');
}

if (isMain(import.meta.url)) writeOrPrint(PANEL_WIRE_TYPES, panelWireTypes());
