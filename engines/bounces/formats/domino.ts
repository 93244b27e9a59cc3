import type { TextFormat } from './text.js';

/** IBM/Lotus Domino and Notes: "was not delivered to: <address> because: <reason>", or "------- Failure Reasons --------". */
export const domino: TextFormat = {
  name: 'Domino',
  detect: (m) => {
    const at = m.text.search(/was not delivered to:/i);
    return (at >= 0 && /because:/i.test(m.text.slice(at, at + 400))) || /^-+ *Failure Reasons *-+/m.test(m.text);
  },
  start: /(?:was not delivered to:|^-+ *Failure Reasons *-+)/im,
  end: [/^-+ *Returned Message *-+/m],
};
