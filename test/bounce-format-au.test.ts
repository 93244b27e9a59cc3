import t from 'tap';
import { formatCases } from './helpers/bounce-format.js';

/** KDDI au (ezweb.ne.jp, dion.ne.jp) bounces (formats/au.ts). */
await formatCases(t, { groups: ['EZweb', 'KDDI'], format: /^au /, shapes: ['other'] });
