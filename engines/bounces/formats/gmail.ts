import type { TextFormat } from './text.js';

/**
 * Gmail's own bounces (before Google moved to RFC 3464): "Delivery to the following recipient
 * failed permanently:" (or "has been delayed"), the address, then "Technical details of
 * permanent failure:" with the other server's reply; the original after "----- Original message -----".
 *
 * Gmail's own sentences, when it quotes no server (it never reached one), state the reason as the
 * reference analyser's Gmail module reads them: it could not connect or reach DNS until it gave
 * up (`expired`, soft), or the domain has no DNS answer (`hostunknown`, hard).
 */
export const gmail: TextFormat = {
  name: 'Gmail',
  detect: (m) => /Delivery to the following recipients? (?:failed permanently|has been delayed)|Technical details of (?:permanent|temporary) failure/i.test(m.text),
  end: [/^-{3,} ?Original message ?-{3,}/im, /^-{3,} ?Message truncated ?-{3,}/im],
  delayed: /has been delayed|THIS IS A WARNING MESSAGE ONLY|Technical details of temporary failure/i,
  states: [
    ['expired', /recipient server did not accept our requests to connect|DNS Error: Could not contact DNS servers/i],
    ['hostunknown', /DNS Error: (?:Domain name not found|DNS server returned answer with no data)/i],
  ],
  statesWithoutCommand: true,
};
