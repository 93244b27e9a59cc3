/**
 * Blocks of RFC 5322-style header fields, the format of a DSN's message/delivery-status part
 * (RFC 3464: one block for the message, one per recipient, separated by empty lines), of an
 * ARF report's message/feedback-report part (RFC 5965: one block) and of a returned message's
 * header section. Hand-written because the format is tiny and the libraries that read it
 * (mailparser, mailsplit) only do so for a whole message, not for a part's body of blocks.
 *
 * Field names are lower-cased; a repeated field keeps every value in order (ARF allows several
 * Original-Rcpt-To, Reported-Domain...). Folded lines are unfolded into one space. Lines that
 * are not fields (no colon, or a name with spaces) are skipped: reports from real MTAs are not
 * always tidy, and one odd line must not lose the rest of the report.
 */
export type FieldBlock = Map<string, string[]>;

const FIELD_NAME = /^[!-9;-~]+$/; // RFC 5322 ftext: printable ASCII except colon

export function parseFieldBlocks(text: string): FieldBlock[] {
  const blocks: FieldBlock[] = [];
  let current: FieldBlock | undefined;
  let last: { name: string; index: number } | undefined;
  // NUL cannot be stored in Postgres text: a report carrying one would fail with a 451 on every
  // retry of the reporting MTA, so it is dropped here, where every report field is read.
  for (const line of text.replace(/\u0000/g, '').replace(/\r\n?/g, '\n').split('\n')) {
    if (line.trim() === '') {
      // An empty line (or one of only white space, which some MTAs emit) ends a block.
      if (current?.size) blocks.push(current);
      current = undefined;
      last = undefined;
      continue;
    }
    if (/^[ \t]/.test(line)) {
      if (current && last) {
        const values = current.get(last.name)!;
        values[last.index] = `${values[last.index]} ${line.trim()}`.trim();
      }
      continue;
    }
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon).trim().toLowerCase() : '';
    if (!name || !FIELD_NAME.test(name)) {
      last = undefined;
      continue;
    }
    current ??= new Map();
    const values = current.get(name) ?? [];
    values.push(line.slice(colon + 1).trim());
    current.set(name, values);
    last = { name, index: values.length - 1 };
  }
  if (current?.size) blocks.push(current);
  return blocks;
}

/** The first value of a field, undefined when absent or empty. */
export function field(block: FieldBlock | undefined, name: string): string | undefined {
  const v = block?.get(name.toLowerCase())?.[0];
  return v ? v : undefined;
}

/**
 * The header section of a message given as text (up to the first empty line), as one block.
 * For the returned original of a DSN or ARF report (message/rfc822 or text/rfc822-headers).
 */
export function headerBlock(message: string): FieldBlock {
  const normalized = message.replace(/\r\n?/g, '\n');
  const end = normalized.search(/\n[ \t]*\n/);
  return parseFieldBlocks(end === -1 ? normalized : normalized.slice(0, end))[0] ?? new Map();
}

/**
 * A typed field's value without its type (RFC 3464 `address-type ";" address`, `diagnostic-type
 * ";" text`): `rfc822; ann@example.org` -> `ann@example.org`. Values without a type are kept whole.
 */
export function untyped(value: string | undefined): { type: string | undefined; value: string } | undefined {
  if (value === undefined) return undefined;
  const semi = value.indexOf(';');
  if (semi > 0 && /^[A-Za-z0-9-]+$/.test(value.slice(0, semi).trim())) {
    return { type: value.slice(0, semi).trim().toLowerCase(), value: value.slice(semi + 1).trim() };
  }
  return { type: undefined, value: value.trim() };
}

/** An address from a field value: angle brackets, a type prefix and comments removed, lower-cased. */
export function addressOf(value: string | undefined): string | undefined {
  const v = untyped(value)?.value;
  if (!v) return undefined;
  const angle = /<([^<>]*)>/.exec(v);
  const bare = (angle ? angle[1]! : v.replace(/\([^()]*\)/g, '')).trim().toLowerCase();
  return bare || undefined;
}
