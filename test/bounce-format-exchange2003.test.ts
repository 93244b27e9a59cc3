import t from 'tap';
import { formatCases } from './helpers/bounce-format.js';

/** Exchange 2000/2003 non-delivery reports (formats/exchange2003.ts). */
await formatCases(t, { groups: ['Exchange2003'], format: /^Exchange2003$/ });
