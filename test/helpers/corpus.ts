import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../runtime/paths.js';

/**
 * The shared corpus of real-world documents (Beefree templates, bounce mails), read where it is:
 * `../shared/corpus` beside the checkout. A clone made elsewhere (CI may clone to any folder)
 * finds it through CARTERO_CORPUS_DIR or the workplace's fixed location, /work/shared/corpus.
 */
function corpusRoot(): string {
  const candidates = [process.env.CARTERO_CORPUS_DIR, join(projectRoot, '..', 'shared', 'corpus'), '/work/shared/corpus'];
  const found = candidates.find((dir): dir is string => !!dir && existsSync(dir));
  if (!found) throw new Error(`the shared corpus is not found (looked in ${candidates.filter(Boolean).join(', ')}); set CARTERO_CORPUS_DIR`);
  return found;
}

/** A path inside the corpus, e.g. corpusPath('templates', 'beefree', 'samples'). */
export function corpusPath(...parts: string[]): string {
  return join(corpusRoot(), ...parts);
}
