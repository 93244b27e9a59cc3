import t from 'tap';
import { formatCases } from './helpers/bounce-format.js';

/** Amazon WorkMail: DSN fields written as text (formats/amazonworkmail.ts, read by rfc3464.ts's text fallback). */
await formatCases(t, { groups: ['AmazonWorkMail'], format: /^AmazonWorkMail$/ });
