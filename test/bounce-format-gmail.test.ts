import t from 'tap';
import { formatCases } from './helpers/bounce-format.js';

/** Gmail's own text bounces and delay warnings (formats/gmail.ts); a delay is recorded as a delay. */
await formatCases(t, { groups: ['Gmail'], format: /^Gmail$/ });
