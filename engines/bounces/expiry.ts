import { normalize } from './reason.js';

/**
 * Whether a report that calls itself a delay (DSN `Action: delayed`, a text family's warning)
 * is in fact the end: the queue gave up. The reference analyser counts an expired delivery as a
 * soft bounce, because the mail was never delivered; a transient delay ("will be retried for
 * 2 more days") stays a log line, since the mail may still arrive.
 *
 * Final: status x.4.7 (delivery time expired) or words saying the retry time ran out; unless the
 * same report says it keeps trying.
 */
export function isFinalExpiry(status: string | undefined, text: string): boolean {
  const t = normalize(text);
  if (STILL_TRYING.test(t)) return false;
  return !!status?.endsWith('.4.7') || GAVE_UP.test(t);
}

const GAVE_UP =
  /retry time(?:out)? (?:exceeded|reached|expired)|message (?:has )?expired|delivery time expired|expired (?:in|after|while in) (?:the )?queue|(?:too long|expired) in (?:the )?queue|giving up|gave up|could not be delivered for more than|unable to deliver (?:this |the )?message after|allowed queue period|maximum (?:queue|retry) (?:time|lifetime)|lifetime exceeded|time to live exceeded|ttl expired/;

const STILL_TRYING =
  /will (?:be )?retr(?:y|ied)|will continue (?:to try|trying|attempting)|delivery attempts will continue|still trying|will try again|will keep trying|only a temporary|warning message only|(?:no|not) need to resend|do not need to resend|no action is required/;
