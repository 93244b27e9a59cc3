import { removeStaleClickHouseDirs } from './env.js';

/** Runs once after the suite: per-file ClickHouse dirs a crashed file left behind (env.ts). */
removeStaleClickHouseDirs();
