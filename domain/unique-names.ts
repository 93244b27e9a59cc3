import { RuleViolation, type RuleCode } from './errors.js';

/**
 * The names an instance gives its things (datasets, forms, lists, fields, consent purposes and
 * terms, templates) are unique in it ignoring case and accents, and the unique index on the name
 * key is the one judge of a collision (a read before the write would race): a write's violation
 * of that index becomes the 409 of its rule.
 */
export interface NameIndex {
  /** The unique index on the name key (sql/migrations/). */
  constraint: string;
  code: RuleCode;
  /** What the name is of, in the message: "another dataset is named ...". */
  noun: string;
}

/** Whether `err` is Postgres's unique violation (23505) of `constraint`. */
export function violates(err: unknown, constraint: string): boolean {
  const e = err as { code?: string; constraint?: string } | undefined;
  return e?.code === '23505' && e.constraint === constraint;
}

/** What a failed write throws: its name index's RuleViolation when it collided on `name`, else the error itself. */
export function orNameTaken(err: unknown, index: NameIndex, name: string): unknown {
  if (!violates(err, index.constraint)) return err;
  return new RuleViolation(index.code, `another ${index.noun} is named ${JSON.stringify(name)} (ignoring case and accents)`);
}

/** Runs a write that names something; a collision on `name` becomes its name index's RuleViolation. */
export async function uniquelyNamed<T>(index: NameIndex, name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    throw orNameTaken(err, index, name);
  }
}
