import t from 'tap';
import { formatCases } from './helpers/bounce-format.js';

/** Bounces of MTAs with no module of their own (formats/x-generic.ts; unnamed MTAs that write a known family's sentences are read by it: X2 qmail's, X3 Gmail's; Verizon's vtext.com gateway sends Apache James's error notice, read by apachejames.ts), forwarded reports (inside message/rfc822) and DSNs whose MIME structure is damaged (read from the text).
 * Sisimai's own module for the unnamed MTA X1 reads its "[User unknown]" as filtered (soft); the words say an unknown user. */
await formatCases(t, { groups: ['X1', 'X2', 'X3', 'X6', 'Biglobe', 'MailMarshalSMTP', 'Verizon', 'Postfix', 'RFC3464', 'MessagingServer'], format: /^(other text bounce|qmail|Gmail|ApacheJames|RFC3464( \(forwarded\)| \(damaged MIME, read as text\))?)$/, minAgreement: 0.85, shapes: ['other'] });
