import t from 'tap';
import { formatCases } from './helpers/bounce-format.js';

/** Exim's text bounces and the providers that send them (GMX, 1&1, Orange): formats/exim.ts. */
await formatCases(t, { groups: ['Exim', 'GMX', 'EinsUndEins', 'rhost:FrancePTT'], format: /^Exim$/, minAgreement: 0.9, shapes: ['other'] });
