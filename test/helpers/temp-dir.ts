import { mkdtempSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Teardown } from './wait.js';

/**
 * A folder of the system's temp dir for a test file's own files (what it hands the CLI to read,
 * what the CLI writes beside them), removed after its last test; `file` writes one there and
 * answers its path.
 */
export function tempDir(t: Teardown, prefix: string): { dir: string; file: (name: string, content: string | Buffer) => string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = (name: string, content: string | Buffer) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  return { dir, file };
}
