import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../runtime/paths.js';

/** Written by before.ts for the whole run, read by every test file. */
export interface TestEnv {
  /** A Postgres URL with rights to CREATE DATABASE; each test file makes its own database. */
  postgresAdminUrl: string;
}

export const TEST_DIR = join(projectRoot, '.data', 'test');
export const TEST_ENV_FILE = join(TEST_DIR, 'env.json');

export function testEnv(): TestEnv {
  return JSON.parse(readFileSync(TEST_ENV_FILE, 'utf8')) as TestEnv;
}
