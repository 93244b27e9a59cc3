import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_DIR } from './env.js';

/** Runs once after the suite: per-file ClickHouse dirs a crashed file may have left behind. */
rmSync(join(TEST_DIR, 'clickhouse'), { recursive: true, force: true });
