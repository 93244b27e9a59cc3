import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../config/paths.js';

/**
 * The shared corpus of real-world documents (Beefree templates, bounce mails), read where it is:
 * `../shared/corpus` beside the checkout. A clone made elsewhere (CI may clone to any folder)
 * finds it through CARTERO_CORPUS_DIR or the workplace's fixed location, /work/shared/corpus.
 */
const OWN_LOCATIONS = [join(projectRoot, '..', 'shared', 'corpus'), '/work/shared/corpus'];

function corpusRoot(): string {
  const candidates = [process.env.CARTERO_CORPUS_DIR, ...OWN_LOCATIONS];
  const found = candidates.find((dir): dir is string => !!dir && existsSync(dir));
  if (!found) throw new Error(`the shared corpus is not found (looked in ${candidates.filter(Boolean).join(', ')}); set CARTERO_CORPUS_DIR`);
  return found;
}

/**
 * Whether the corpus in use is the project's own (found beside the checkout or at the fixed
 * location, or named by CARTERO_CORPUS_DIR and the same folder), not another folder of the same
 * shape given through CARTERO_CORPUS_DIR: a test may only skip what its corpus lacks in the latter.
 */
export function corpusIsOwn(): boolean {
  const real = (dir: string) => (existsSync(dir) ? realpathSync(dir) : dir);
  const root = real(corpusRoot());
  return OWN_LOCATIONS.some((dir) => real(dir) === root);
}

/** A path inside the corpus, e.g. corpusPath('templates', 'beefree', 'samples'). */
export function corpusPath(...parts: string[]): string {
  return join(corpusRoot(), ...parts);
}
