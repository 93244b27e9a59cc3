import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Code runs both from source (tests via tsc output) and from dist/; walking up to package.json
// gives one answer for "where are the non-TypeScript assets (sql/, analytics/*.c)".
function findRoot(start: string): string {
  let dir = start;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`package.json not found above ${start}`);
    dir = parent;
  }
  return dir;
}

export const projectRoot = findRoot(dirname(fileURLToPath(import.meta.url)));
