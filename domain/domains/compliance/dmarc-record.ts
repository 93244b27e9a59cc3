import { recordsStarting, type Answer } from './dns-answers.js';

/**
 * A domain's DMARC record (RFC 7489 6.3) as the compliance checks read it: the tags of the one
 * `v=DMARC1` TXT record at `_dmarc.<domain>`. The same place and the same validity as the
 * domain's DMARC check (dns-verify.ts): exactly one such record, with p= none, quarantine or
 * reject; anything else is no policy (RFC 7489 6.6.3: a receiver then applies none).
 */
export type DmarcRecord =
  | { kind: 'valid'; record: string; p: 'none' | 'quarantine' | 'reject'; aspf: 'r' | 's'; adkim: 'r' | 's'; rua: string[] }
  | { kind: 'absent' }
  | { kind: 'several'; count: number }
  | { kind: 'invalid'; record: string; why: string }
  | { kind: 'unavailable' };

const DMARC1 = /^v\s*=\s*DMARC1\s*(;|$)/i;

export function dmarcRecordName(domain: string): string {
  return `_dmarc.${domain}`;
}

/** Tag name → value of a tag-value list (RFC 7489 6.4): lower-case names, trimmed values, the first of a repeated tag. */
function tags(record: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of record.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim().toLowerCase();
    if (name && !out.has(name)) out.set(name, part.slice(eq + 1).trim());
  }
  return out;
}

export function readDmarcRecord(answer: Answer): DmarcRecord {
  if (answer.kind === 'unavailable') return { kind: 'unavailable' };
  const records = recordsStarting(answer, DMARC1);
  if (!records.length) return { kind: 'absent' };
  if (records.length > 1) return { kind: 'several', count: records.length };
  const record = records[0]!.trim();
  const t = tags(record);
  const p = (t.get('p') ?? '').toLowerCase();
  if (p !== 'none' && p !== 'quarantine' && p !== 'reject') {
    return { kind: 'invalid', record, why: t.has('p') ? `p=${t.get('p')} is not none, quarantine or reject` : 'it has no p= tag' };
  }
  const mode = (v: string | undefined): 'r' | 's' => (v?.toLowerCase() === 's' ? 's' : 'r');
  // rua: comma-separated URIs, each possibly followed by !size (RFC 7489 6.2); only mailto: is in use.
  const rua = (t.get('rua') ?? '')
    .split(',')
    .map((u) => u.trim().replace(/!\d+[kmgt]?$/i, ''))
    .filter((u) => u !== '');
  return { kind: 'valid', record, p, aspf: mode(t.get('aspf')), adkim: mode(t.get('adkim')), rua };
}

/** The addresses of the record's mailto: rua URIs, lower-case (percent-encoding undone, RFC 7489 6.2). */
export function ruaAddresses(rua: readonly string[]): string[] {
  return rua.flatMap((uri) => {
    const m = /^mailto:([^?]+)/i.exec(uri);
    if (!m) return [];
    try {
      return [decodeURIComponent(m[1]!).trim().toLowerCase()];
    } catch {
      return [m[1]!.trim().toLowerCase()];
    }
  });
}
