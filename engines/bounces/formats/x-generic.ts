import { fromMailSystem, type TextFormat } from './text.js';

/**
 * Any other mail system's bounce: from a mail daemon or postmaster, or with a bounce subject, in
 * no family above (MailMarshal, Verizon, Biglobe, Notes, unnamed MTAs...). The whole text up to
 * the usual markers of a returned original is the error section.
 */
const BOUNCE_SUBJECT = /undeliver|undelivered|returned mail|delivery (?:status notification|failure|failed|has failed|problem|notification)|failure notice|mail delivery failed|non[- ]?delivery|could not be delivered|system error|mailer error|returned to sender|delivery report|error sending your mail|nicht zustellbar|non remis/i;

/**
 * Whether a mail system's message says something failed: a 4xx/5xx reply or enhanced status, a
 * reason's words, or failure words (English and Japanese: a Japanese MTA's system error notice
 * says only that delivery failed). A read receipt or a "delivered" notice in a format of its own
 * has none of these and is no bounce (the listener changes nothing).
 */
const FAILURE_WORDS =
  /undeliver|not (?:be )?delivered|delivery (?:has )?failed|failed|failure|could not|couldn't|unable to|rejected|refused|returned|error|permanent|delayed|not yet been delivered|(?:配信|配送|送信|転送)(?:でき|され)(?:ません|なかった)|(?:配信|配送|送信)に失敗|届け(?:られ)?ませんでした|エラー|障害|拒否/i;

export function saysFailure(text: string, subject: string): boolean {
  return /(?:^|[\s(<[:])[45]\d\d(?=[\s:-]|$)|\b[45]\.\d{1,3}\.\d{1,3}\b/m.test(text) || FAILURE_WORDS.test(subject) || FAILURE_WORDS.test(text);
}

export const generic: TextFormat = {
  name: 'other text bounce',
  detect: (m) => fromMailSystem(m) || BOUNCE_SUBJECT.test(m.subject),
  end: [
    /^-{2,} ?(?:Original message|Unsent message|Returned message|Below this line|This is a copy|The header of the original)/im,
    /^Original message follows/im,
    /^(?:Additional Information|The attachment contains the original)/im,
  ],
  delayed: /THIS IS A WARNING (?:MESSAGE )?ONLY|will be retried|still being retried|delivery attempts will continue|has not yet been delivered/i,
};
