import type { TextFormat } from './text.js';

/** Digital Arts m-FILTER: a Japanese notice, the address, "-------server message" with the reply, "-------original message". */
export const mfilter: TextFormat = {
  name: 'mFILTER',
  detect: (m) => /^-{7}server message/m.test(m.text) || /m-FILTER/.test(m.text),
  end: [/^-{7}original (?:message|mail info)/m],
};
