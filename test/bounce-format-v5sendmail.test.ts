import t from 'tap';
import { formatCases } from './helpers/bounce-format.js';

/** Sendmail V5 transcripts without DSN (formats/v5sendmail.ts). */
await formatCases(t, { groups: ['V5sendmail'], format: /^V5sendmail$/ });
