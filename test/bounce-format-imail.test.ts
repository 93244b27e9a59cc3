import t from 'tap';
import { formatCases } from './helpers/bounce-format.js';

/** Ipswitch IMail's one-line bounces (formats/imail.ts). */
await formatCases(t, { groups: ['IMailServer'], format: /^IMailServer$/ });
