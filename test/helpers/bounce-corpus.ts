import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dsnVerdict } from '../../engines/bounces/dsn.js';
import { decodeInbound, type DecodedReport } from '../../engines/bounces/formats/index.js';
import { COMPLAINT_TYPES } from '../../engines/bounces/arf.js';
import { corpusPath } from './corpus.js';

/**
 * The bounce corpus (../shared/corpus/bounces: real bounce, feedback-loop and auto-reply mails
 * with what the reference analyser Sisimai decodes from each), read for the per-format tests, the
 * whole-folder test through the listener and bench/bounces.ts. Samples are chosen by their family
 * (`group` in manifest.json), never by file name: the same code runs on any folder of the same
 * shape (CARTERO_CORPUS_DIR).
 */
export interface CorpusSample {
  file: string;
  group: string;
  shape: 'rfc3464' | 'arf' | 'other';
  expect: 'bounce' | 'complaint' | 'none';
  hardbounce: boolean | null;
  reason: string | null;
  feedback_type: string | null;
}

export interface Corpus {
  dir: string;
  samples: CorpusSample[];
}

export function loadBounceCorpus(): Corpus {
  const dir = corpusPath('bounces');
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { samples: CorpusSample[] };
  return { dir, samples: manifest.samples };
}

export function sampleBytes(corpus: Corpus, sample: CorpusSample): Buffer {
  return readFileSync(join(corpus.dir, sample.file));
}

/** What Sisimai says should happen: hard or soft bounce, complaint, or nothing. */
export type Expected = 'hard' | 'soft' | 'complaint' | 'none';

export function expected(sample: CorpusSample): Expected {
  if (sample.expect === 'bounce') return sample.hardbounce ? 'hard' : 'soft';
  return sample.expect;
}

/**
 * What Cartero did, in the same terms. A delay report is recorded as a delay (a log row, no
 * bounce: the rule), which is a soft outcome: nothing restricts the address.
 */
export type Outcome = 'hard' | 'soft' | 'delay' | 'complaint' | 'none';

export function agrees(want: Expected, got: Outcome): boolean {
  return want === got || (want === 'soft' && got === 'delay');
}

/**
 * The address a mail sent to this report's recipient would have had: the first recipient the
 * report names (a bounce), or a placeholder when it names none (then the report binds to the mail
 * by its tagged return path alone, as the listener allows for a report sent to one return path).
 */
export function reportRecipient(decoded: DecodedReport, fallback: string): string {
  if (decoded.kind !== 'bounce') return fallback;
  const first = decoded.report.recipients.find((r) => r.finalRecipient || r.originalRecipient);
  return first?.finalRecipient ?? first?.originalRecipient ?? fallback;
}

/** The outcome by the listener's own decoding and verdict, without the database (per-format tests). */
export async function decodeOutcome(raw: Buffer): Promise<{ decoded: DecodedReport; outcome: Outcome; reason?: string }> {
  const decoded = await decodeInbound(raw);
  if (decoded.kind === 'complaint') return { decoded, outcome: COMPLAINT_TYPES.has(decoded.report.feedbackType) ? 'complaint' : 'none' };
  if (decoded.kind !== 'bounce') return { decoded, outcome: 'none' };
  const verdict = dsnVerdict(decoded.report, reportRecipient(decoded, 'nobody@invalid.example'), true);
  if (verdict.kind === 'none') return { decoded, outcome: 'none' };
  return { decoded, outcome: verdict.kind === 'delayed' ? 'delay' : verdict.bounceClass!, ...(verdict.reason ? { reason: verdict.reason } : {}) };
}

export interface FormatRow {
  group: string;
  samples: number;
  handled: number;
  sameReason: number;
}

/** One row per family, then the total: the table docs/bounces.md shows. */
export function formatTable(rows: Map<string, FormatRow>): string {
  const all = [...rows.values()].sort((a, b) => a.group.localeCompare(b.group));
  const total = all.reduce((s, r) => ({ group: 'all', samples: s.samples + r.samples, handled: s.handled + r.handled, sameReason: s.sameReason + r.sameReason }), {
    group: 'all',
    samples: 0,
    handled: 0,
    sameReason: 0,
  });
  const pct = (n: number, d: number) => `${((100 * n) / d).toFixed(1)} %`;
  const line = (r: FormatRow) => `| ${r.group} | ${r.samples} | ${r.handled} | ${pct(r.handled, r.samples)} | ${r.sameReason} |`;
  return ['| family (manifest group) | samples | handled as Sisimai | % | same reason |', '|---|---|---|---|---|', ...all.map(line), line(total)].join('\n');
}

export function countRow(rows: Map<string, FormatRow>, sample: CorpusSample, handled: boolean, sameReason: boolean): void {
  const row = rows.get(sample.group) ?? { group: sample.group, samples: 0, handled: 0, sameReason: 0 };
  row.samples++;
  if (handled) row.handled++;
  if (sameReason) row.sameReason++;
  rows.set(sample.group, row);
}
