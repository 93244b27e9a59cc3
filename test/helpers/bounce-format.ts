import type { Test } from 'tap';
import { agrees, decodeOutcome, expected, loadBounceCorpus, sampleBytes, type CorpusSample } from './bounce-corpus.js';
import { corpusIsOwn } from './corpus.js';

/**
 * The test of one format module on the corpus samples of its family (`groups`; all when absent, with `shapes`): each sample is recognised by
 * that module (not by a neighbour, not left unknown), nothing that is no bounce becomes one, and
 * the hard/soft verdict agrees with Sisimai's on at least `minAgreement` of them (the
 * disagreements are listed: they are where Sisimai applies a provider's own rule that the text
 * does not show; docs/bounces.md). A family with no sample fails on the project's own corpus and is
 * reported skipped on another folder (CARTERO_CORPUS_DIR).
 */
export async function formatCases(
  t: Test,
  opts: { groups?: readonly string[]; shapes?: readonly CorpusSample['shape'][]; format: RegExp; minAgreement?: number },
): Promise<void> {
  const corpus = loadBounceCorpus();
  const samples = corpus.samples.filter((s) => (!opts.groups || opts.groups.includes(s.group)) && (!opts.shapes || opts.shapes.includes(s.shape)));
  // Every family the test names must have a sample (of the shapes asked for): one without any
  // would leave its part of the module untested while the file still passes.
  const missing = opts.groups ? opts.groups.filter((g) => !samples.some((s) => s.group === g)) : samples.length ? [] : ['any family'];
  if (missing.length) {
    const what = `no sample of ${missing.join(', ')}${opts.shapes ? ` (${opts.shapes.join(', ')})` : ''} in ${corpus.dir}`;
    // The project's corpus has a sample of every family a test names: missing there, a sample
    // was removed or a group renamed. Another folder (CARTERO_CORPUS_DIR) may hold fewer: said, not passed.
    if (corpusIsOwn()) t.fail(`${what}: the family goes untested; add a sample or drop the family from this test`);
    else t.pass(what, { skip: 'another corpus folder (CARTERO_CORPUS_DIR): the family is not tested here' });
    if (!samples.length) return;
  }
  const disagreements: string[] = [];
  for (const s of samples) {
    const { decoded, outcome, reason } = await decodeOutcome(sampleBytes(corpus, s));
    const format = decoded.kind === 'unknown' ? 'unknown' : decoded.format;
    t.match(format, opts.format, `${s.file}: decoded by its family's module`);
    const want = expected(s);
    if (want === 'none' || want === 'complaint') t.notOk(outcome === 'hard' || outcome === 'soft', `${s.file}: no false bounce`);
    if (!agrees(want, outcome)) disagreements.push(`${s.file}: Sisimai ${want} (${s.reason}), Cartero ${outcome} (${reason ?? '-'})`);
  }
  const agreed = samples.length - disagreements.length;
  if (disagreements.length) t.comment(disagreements.join('\n'));
  t.ok(agreed / samples.length >= (opts.minAgreement ?? 1), `${agreed}/${samples.length} handled as Sisimai decodes them`);
}
