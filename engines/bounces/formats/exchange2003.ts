import type { TextFormat } from './text.js';

/**
 * Microsoft Exchange 2000/2003: "Your message ... did not reach the following recipient(s):", each
 * recipient as "<address> on <date>", then the reason and an MSEXCH:IMS code.
 */
export const exchange2003: TextFormat = {
  name: 'Exchange2003',
  detect: (m) => /did not reach the following recipient\(s\):/i.test(m.text),
  start: /did not reach the following recipient\(s\):/i,
  end: [/^-+ *Original message/im],
};
