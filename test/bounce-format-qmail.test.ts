import t from 'tap';
import { formatCases } from './helpers/bounce-format.js';

/** qmail-send's text bounces (formats/qmail.ts): `<address>:`, the remote reply, the (#x.y.z) status. */
await formatCases(t, { groups: ['qmail'], format: /^qmail$/ });
