/**
 * Which enhanced status speaks for a failure when a report gives two: its `Status:` field and a
 * code inside the remote server's words ("Diagnostic-Code: smtp; 550 5.1.1 ..."). MTAs often
 * fill the field with a generic code (5.0.0, 4.4.7 "expired", 5.3.0 "system") while the remote
 * server's own code is the specific one; the reference analyser prefers that one in the same
 * cases, which this follows.
 */
export function preferredStatus(field: string | undefined, inMessage: string | undefined, replyCode: number | undefined): string | undefined {
  if (!field || !inMessage) return field ?? inMessage;
  if (field === inMessage) return field;
  // Different classes: the one the reply code's class agrees with.
  if (field[0] !== inMessage[0] && replyCode !== undefined) {
    const cls = String(replyCode)[0];
    if (cls === field[0]) return field;
    if (cls === inMessage[0]) return inMessage;
  }
  const generic = (s: string) => /\.0\.0$/.test(s);
  const vague = (s: string) => /\.0(?:\.|$)/.test(s);
  if (generic(field)) return generic(inMessage) ? field : inMessage;
  if (vague(field) && !vague(inMessage)) return inMessage;
  if (generic(inMessage)) return field;
  // Codes that name a circumstance, not a cause: expiry, "too many errors", system, protocol.
  if (field === '4.4.7' || field === '4.7.0' || field.startsWith('5.3.') || /^[45]\.5\.[1245]$/.test(field)) return inMessage;
  if (field === '5.1.1') return vague(inMessage) || inMessage.startsWith('5.5.') ? field : inMessage;
  if (field === '5.1.3' && inMessage.startsWith('5.7.')) return inMessage;
  return field;
}

/** The first enhanced status code in a server's words (5.1.1, 4.7.0...). */
export function statusInText(text: string | undefined): string | undefined {
  const m = text ? /(?<![\d.])([245])\.(\d{1,3})\.(\d{1,3})(?![\d.])/.exec(text) : null;
  return m ? `${m[1]}.${Number(m[2])}.${Number(m[3])}` : undefined;
}
