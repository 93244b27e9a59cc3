import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { Finding } from '../findings.js';
import { descriptorSchema, documentSchema } from '../format/schema.js';
import { KINDS } from '../format/nodes.js';
import { finding } from './finding.js';
import { uuidAt } from './pointer.js';
import { eachModule } from './walk.js';
import { kindOfType } from '../format/nodes.js';

/**
 * Wrong JSON types and missing required fields (invalid_type, missing_field), by ajv with the
 * schema derived from the declaration. The document schema stops at each module's descriptor;
 * the descriptor of a module of a known kind is then checked with that kind's schema, its
 * pointers rebased onto the module.
 */
const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, strictTypes: false });
const validateDocument: ValidateFunction = ajv.compile(documentSchema());
const validateDescriptor = new Map<string, ValidateFunction>(Object.keys(KINDS).map((k) => [k, ajv.compile(descriptorSchema(k))]));

const jsonType = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' && Number.isInteger(v) ? 'integer' : typeof v);

function toFinding(doc: unknown, e: ErrorObject, base: string): Finding | undefined {
  const at = base + e.instancePath;
  if (e.keyword === 'required') {
    const field = (e.params as { missingProperty: string }).missingProperty;
    const pointer = `${at}/${field.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    return finding('missing_field', pointer, uuidAt(doc, at), `${field} is required here`);
  }
  if (e.keyword === 'type') {
    const want = ([] as string[]).concat((e.params as { type: string | string[] }).type).filter((t) => t !== 'null');
    const got = jsonType(e.data);
    return finding('invalid_type', at, uuidAt(doc, at), `must be ${want.join(' or ')}, not ${got}`, { expected: want, actual: got });
  }
  return undefined;
}

export function checkSchema(doc: unknown): Finding[] {
  const out: Finding[] = [];
  if (!validateDocument(doc)) {
    for (const e of validateDocument.errors ?? []) {
      const f = toFinding(doc, e, '');
      if (f) out.push(f);
    }
  }
  eachModule(doc, ({ module, pointer }) => {
    const kind = kindOfType(module.type);
    const validate = kind !== undefined ? validateDescriptor.get(kind) : undefined;
    const descriptor = module.descriptor;
    if (!validate || typeof descriptor !== 'object' || descriptor === null || Array.isArray(descriptor)) return;
    if (!validate(descriptor)) {
      for (const e of validate.errors ?? []) {
        const f = toFinding(doc, e, `${pointer}/descriptor`);
        if (f) out.push(f);
      }
    }
  });
  return out;
}
