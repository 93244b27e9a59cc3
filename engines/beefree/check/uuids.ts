import type { Finding } from '../findings.js';
import { finding } from './finding.js';
import { walkDocument } from './walk.js';

/**
 * Repeated uuids: a warning at every node after the first that carries one, never a rejection
 * (Beefree's own exports repeat column uuids across rows). Only the nodes the declaration gives
 * a uuid (rows, columns, modules) count.
 */
export function checkUuids(doc: unknown): Finding[] {
  const out: Finding[] = [];
  const first = new Map<string, string>();
  walkDocument(doc, {
    node({ decl, value, pointer }) {
      if (!('uuid' in decl.fields)) return;
      const u = value.uuid;
      if (typeof u !== 'string' || u === '') return;
      const seen = first.get(u);
      if (seen === undefined) first.set(u, pointer);
      else out.push(finding('duplicate_uuid', `${pointer}/uuid`, u, `uuid ${u} is also used at ${seen}`, { first: seen }));
    },
  });
  return out;
}
