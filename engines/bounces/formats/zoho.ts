import type { TextFormat } from './text.js';

/**
 * Zoho Mail: "----- The following addresses had fatal errors -----" with bracketed "[Status: Error,
 * Address: <...>, ResponseCode 421, ...]" entries, or "<address> Error, ERROR_CODE :550, ..." lines.
 */
export const zoho: TextFormat = {
  name: 'Zoho',
  detect: (m) => /@(?:[a-z0-9-]+\.)*zoho\.(?:com|eu|in)$/i.test(m.from) || /ERROR_CODE :\d{3}|ResponseCode \d{3}/.test(m.text),
  start: /(?:The following addresses had fatal errors -+|This is a permanent error\.)\s*/i,
  end: [/^-+ ?Transcript of session follows/im, /^Received: ?from/im],
  delayed: /THIS IS A WARNING MESSAGE ONLY|Message will be retried/i,
};
