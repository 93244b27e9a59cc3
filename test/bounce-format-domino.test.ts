import t from 'tap';
import { formatCases } from './helpers/bounce-format.js';

/** Lotus Domino and Notes text bounces (formats/domino.ts). */
await formatCases(t, { groups: ['Domino', 'Notes'], format: /^Domino$/, shapes: ['other'] });
