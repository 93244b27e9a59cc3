import t from 'tap';
import { formatCases } from './helpers/bounce-format.js';

/** Yahoo! Mail's text bounces (formats/yahoo.ts). */
await formatCases(t, { groups: ['Yahoo'], format: /^Yahoo$/, minAgreement: 0.8 });
