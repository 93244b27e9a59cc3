import { htmlTokenizer, isConditionalComment } from '../../html/tokenizer.js';

/**
 * The start tags of an HTML fragment with their attributes (names lower-cased, values with their
 * character references decoded, as a browser reads them), in order. Tokenised only (linear time,
 * engines/html/tokenizer.ts). The inside of conditional comments (`<!--[if mso]>...`) is markup
 * Outlook renders, so it is scanned too.
 */
export interface StartTag {
  name: string;
  attributes: Array<{ name: string; value: string }>;
}

export function startTags(html: string): StartTag[] {
  const tags: StartTag[] = [];
  scan(html, tags, true);
  return tags;
}

function scan(html: string, tags: StartTag[], intoConditionalComments: boolean): void {
  let tag: StartTag | undefined;
  let attr: { name: string; value: string } | undefined;
  const tokenizer = htmlTokenizer(
    { decodeEntities: true },
    {
      onopentagname(start, end) {
        tag = { name: html.slice(start, end).toLowerCase(), attributes: [] };
        tags.push(tag);
      },
      onattribname(start, end) {
        attr = { name: html.slice(start, end).toLowerCase(), value: '' };
        tag?.attributes.push(attr);
      },
      onattribdata(start, end) {
        if (attr) attr.value += html.slice(start, end);
      },
      onattribentity(codepoint) {
        if (attr) attr.value += String.fromCodePoint(codepoint);
      },
      onattribend() {
        attr = undefined;
      },
      onopentagend() {
        tag = undefined;
      },
      onselfclosingtag() {
        tag = undefined;
      },
      oncomment(start, end, endOffset) {
        if (intoConditionalComments && isConditionalComment(html, start)) scan(html.slice(start, end - endOffset), tags, false);
      },
    },
  );
  tokenizer.write(html);
  tokenizer.end();
}
