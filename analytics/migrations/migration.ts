/**
 * One versioned ClickHouse schema change. Statements run one at a time, in order, against the
 * database named by CLICKHOUSE_URL (do not qualify table names with a database).
 *
 * ClickHouse DDL is not transactional: a crash can leave some statements applied and the version
 * unrecorded, and the next run repeats them. So every `up` statement must be safe to repeat
 * (`CREATE TABLE IF NOT EXISTS`, `ADD COLUMN IF NOT EXISTS`, ...), and likewise every `down`.
 */
export interface Migration {
  /** Zero-padded, sortable, unique: '001', '002', ... */
  version: string;
  name: string;
  up: string[];
  down: string[];
}
