/** Escape LIKE wildcards so a partial-text filter matches the characters literally. */
export function likeContains(value: string): string {
  return '%' + value.replace(/[\\%_]/g, (c) => '\\' + c) + '%';
}

/** A LIKE pattern matching values that start with `value` (wildcards in it escaped). */
export function likePrefix(value: string): string {
  return value.replace(/[\\%_]/g, (c) => '\\' + c) + '%';
}
