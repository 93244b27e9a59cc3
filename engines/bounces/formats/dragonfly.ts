import type { TextFormat } from './text.js';

/** DragonFly Mail Agent (dma): "There was an error delivering your mail to <address>.", the remote reply, "Message headers follow." */
export const dragonfly: TextFormat = {
  name: 'DragonFly',
  detect: (m) => /This is the DragonFly Mail Agent|There was an error delivering your mail to </i.test(m.text),
  start: /There was an error delivering your mail to /i,
  end: [/^Message headers follow\./m, /^Original message follows\./m],
  // dma's own sentences: a failed DNS lookup of the recipient's domain, a queue that gave up.
  states: [
    ['hostunknown', /DNS lookup failure: host \S+ not found/i],
    ['expired', /could not deliver for the last \d+ seconds/i],
  ],
};
