/**
 * The spreadsheet-formula guard of CSV exports (spec: GET /v1/activities/opens/export), as one
 * ClickHouse SQL expression, so ClickHouse applies it while it formats the CSV and Node only
 * pipes bytes; and the same rule for the CSV files Node writes itself (the rejects file of an
 * import or list upload, domain/csv-input.ts). This is the only definition of the rule: both
 * forms are built from the two patterns below. test/exports.test.ts runs it through a real
 * export against every case of the spec; test/import-csv.test.ts checks a rejects file against
 * ClickHouse's evaluation.
 *
 * The rule, for a text cell or a header:
 * - it starts with `=`, `+`, `-`, `@`, a tab or a carriage return → one apostrophe is prepended;
 * - it starts with one or more apostrophes followed by one of those characters → one more
 *   apostrophe is prepended (`'=x` → `''=x`), so a consumer that removes one leading apostrophe
 *   from such cells gets back exactly the stored text;
 * - except a cell that is only a number, written unchanged (`-5`, `-1200.50`).
 *
 * "Only a number" is, precisely: the whole text matches `^-?([0-9]+(\.[0-9]*)?|\.[0-9]+)$`: an
 * optional minus sign, then ASCII digits with at most one decimal point (`-5`, `-1200.50`, `-.5`,
 * `-5.`). Not numbers, so guarded when they start with a trigger: a leading `+` (a phone number
 * such as `+56912345678` is text), exponents (`-1e5`), thousands separators (`-1,200`), spaces
 * (`-5 `), a lone `-`, NaN/Infinity. Only text starting with `-` can be both a trigger and a
 * number, so in effect: a text starting with `-` stays unchanged exactly when the rest is a plain
 * decimal number. A text column's value is judged by its text, whatever the column means (a
 * custom_msg_id of `-5` is only a number, so it is unchanged). Apostrophe-led texts are never
 * numbers (`'-5` → `''-5`). NULL stays NULL (an empty cell); the empty string stays empty.
 */

/** A trigger character after any run of apostrophes (\x27), at the start of the text. */
const TRIGGER_RE = /^\x27*[=+@\t\r-]/;
/** The whole text is a plain decimal number, optionally negative. */
const ONLY_A_NUMBER_RE = /^-?([0-9]+(\.[0-9]*)?|\.[0-9]+)$/;

// ClickHouse's match (RE2) reads the same pattern text: without the m flag `^` and `$` are the
// text's own start and end in both engines, and these use nothing the two read apart. Literals,
// so test/redos.test.ts checks them like every other pattern.
const TRIGGER = TRIGGER_RE.source;
const ONLY_A_NUMBER = ONLY_A_NUMBER_RE.source;

/** The guarded text of a CSV cell (or header) that Node writes: the rule above, applied in JavaScript. */
export function formulaGuard(text: string): string {
  return TRIGGER_RE.test(text) && !ONLY_A_NUMBER_RE.test(text) ? `'${text}` : text;
}

/** A ClickHouse string literal of `s` (backslashes and quotes escaped). */
function sqlString(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * The guarded value of `expr`, a ClickHouse expression of type String, Nullable(String) or
 * LowCardinality of those (typically a backquoted column name or a `{name:String}` parameter).
 * `expr` appears three times, so pass a column or parameter, not a costly expression.
 */
export function formulaGuardSql(expr: string): string {
  return `if(match(${expr}, ${sqlString(TRIGGER)}) AND NOT match(${expr}, ${sqlString(ONLY_A_NUMBER)}), concat('\\'', ${expr}), ${expr})`;
}
