import type { TextFormat } from './text.js';

/** Sendmail V5 and other sendmails without DSN: "Returned mail: ...", the transcript with "<<< 550 ..." replies, "----- Unsent message follows -----". */
export const v5sendmail: TextFormat = {
  name: 'V5sendmail',
  detect: (m) => /^Returned mail:/i.test(m.subject) && /^ *-{3,} ?(?:Transcript of session follows|Unsent message follows)/im.test(m.text),
  start: /^ *-{3,} ?Transcript of session follows ?-+/im,
  end: [/^ *-{3,} ?(?:Unsent|Original) message follows/im, /^ *-{3,} ?Returned message/im],
};
