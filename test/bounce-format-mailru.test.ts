import t from 'tap';
import { formatCases } from './helpers/bounce-format.js';

/** Mail.Ru's bounces (a Russian notice, then Exim's text): formats/mailru.ts. */
await formatCases(t, { groups: ['MailRu'], format: /^MailRu$/ });
