import type { Client } from '../sql/pool.js';

/**
 * Enqueue jobs inside the caller's transaction (pg-boss's `db` option), so a business write and
 * its jobs commit together or not at all. Implemented over pg-boss in runtime/queue.ts.
 */
export interface JobQueue {
  insert(client: Client, jobs: Array<{ name: string; data: object }>): Promise<void>;
}
