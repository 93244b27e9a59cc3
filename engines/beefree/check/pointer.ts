import type { Finding } from '../findings.js';
import { RULES } from '../format/rules.js';
import { isRecord } from '../format/nodes.js';

/** RFC 6901: `~` → `~0`, `/` → `~1`. */
export function pointerToken(token: string | number): string {
  return String(token).replace(/~/g, '~0').replace(/\//g, '~1');
}

export function childPointer(pointer: string, ...tokens: Array<string | number>): string {
  return pointer + tokens.map((t) => `/${pointerToken(t)}`).join('');
}

export function pointerTokens(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** A node's own uuid when it has a usable one. */
export function ownUuid(v: unknown): string | null {
  return isRecord(v) && typeof v.uuid === 'string' && v.uuid !== '' ? v.uuid : null;
}

/** The uuid of the node at `pointer`, or of its nearest ancestor that has one. */
export function uuidAt(doc: unknown, pointer: string): string | null {
  let node: unknown = doc;
  let uuid = ownUuid(node);
  for (const t of pointerTokens(pointer)) {
    if (Array.isArray(node)) node = node[Number(t)];
    else if (isRecord(node)) node = node[t];
    else break;
    uuid = ownUuid(node) ?? uuid;
  }
  return uuid;
}

/**
 * Orders findings as the document reads: by pointer, array items by index and object members in
 * the order the document writes them (members it lacks, e.g. a missing field, after the present
 * ones, by name); a node before what is inside it; then by rule (table order) and message. Same
 * input, same order, every time.
 */
export function sortFindings(doc: unknown, findings: Finding[]): Finding[] {
  const ruleOrder = new Map(Object.keys(RULES).map((r, i) => [r, i]));
  const keyCache = new Map<string, Array<[number, string]>>();
  const keyOf = (pointer: string): Array<[number, string]> => {
    let k = keyCache.get(pointer);
    if (k) return k;
    k = [];
    let node: unknown = doc;
    for (const t of pointerTokens(pointer)) {
      if (Array.isArray(node)) {
        const i = /^\d+$/.test(t) ? Number(t) : Number.MAX_SAFE_INTEGER;
        k.push([i, t]);
        node = node[i];
      } else if (isRecord(node)) {
        const i = Object.keys(node).indexOf(t);
        k.push([i === -1 ? Number.MAX_SAFE_INTEGER : i, t]);
        node = node[t];
      } else {
        k.push([Number.MAX_SAFE_INTEGER, t]);
        node = undefined;
      }
    }
    keyCache.set(pointer, k);
    return k;
  };
  const cmp = (a: Finding, b: Finding): number => {
    const ka = keyOf(a.pointer);
    const kb = keyOf(b.pointer);
    for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
      if (ka[i][0] !== kb[i][0]) return ka[i][0] - kb[i][0];
      if (ka[i][1] !== kb[i][1]) return ka[i][1] < kb[i][1] ? -1 : 1;
    }
    if (ka.length !== kb.length) return ka.length - kb.length;
    const ra = ruleOrder.get(a.rule) ?? Number.MAX_SAFE_INTEGER;
    const rb = ruleOrder.get(b.rule) ?? Number.MAX_SAFE_INTEGER;
    if (ra !== rb) return ra - rb;
    if (a.rule !== b.rule) return a.rule < b.rule ? -1 : 1;
    return a.message < b.message ? -1 : a.message > b.message ? 1 : 0;
  };
  return [...findings].sort(cmp);
}
