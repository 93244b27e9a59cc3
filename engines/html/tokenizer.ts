import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';

/**
 * htmlparser2's Tokenizer with only the callbacks a scan listens to; every other token is
 * ignored. The Tokenizer alone, never the Parser: it runs in linear time, while the Parser's stack
 * of open elements costs time in proportion to its depth at every tag (quadratic on deeply nested
 * input). Used wherever Cartero reads HTML it did not write: link tracking and the text part's
 * bounds (domain/mail/render.ts), fragment depth and text (engines/beefree/render/fragment.ts),
 * the checks' tag scans (engines/beefree/check/). The caller writes the HTML and ends it, and
 * may pause the tokenizer from a callback to stop early.
 */
export function htmlTokenizer(options: { decodeEntities: boolean }, callbacks: Partial<TokenizerCallbacks>): Tokenizer {
  return new Tokenizer(options, { ...IGNORED, ...callbacks });
}

const IGNORED: TokenizerCallbacks = {
  onattribdata() {},
  onattribentity() {},
  onattribend() {},
  onattribname() {},
  oncdata() {},
  onclosetag() {},
  oncomment() {},
  ondeclaration() {},
  onend() {},
  onopentagend() {},
  onopentagname() {},
  onprocessinginstruction() {},
  onselfclosingtag() {},
  ontext() {},
  ontextentity() {},
};

/**
 * Whether the comment whose text starts at `start` is a conditional comment
 * (`<!--[if mso]> markup <![endif]-->`): Outlook renders what is inside, so scans that look for
 * links or tags read it as markup.
 */
export function isConditionalComment(html: string, start: number): boolean {
  return /^\[if\s/i.test(html.slice(start, start + 4));
}
