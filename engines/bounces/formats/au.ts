import type { TextFormat } from './text.js';

/**
 * KDDI au (ezweb.ne.jp, dion.ne.jp): a Japanese notice, then English lines ("The user(s) account is
 * disabled.", "was not delivered within ...") and the `<address>`; the original attached.
 */
export const au: TextFormat = {
  name: 'au (EZweb, KDDI)',
  detect: (m) => /@(?:[a-z0-9-]+\.)*(?:ezweb\.ne\.jp|dion\.ne\.jp|au\.com)$/i.test(m.from),
  end: [/^-{3,}\s*Original message/im],
};
