import t from 'tap';
import { formatCases } from './helpers/bounce-format.js';

/** OpenSMTPD's text bounces and delay warnings (formats/opensmtpd.ts). */
await formatCases(t, { groups: ['OpenSMTPD'], format: /^OpenSMTPD$/, shapes: ['other'] });
