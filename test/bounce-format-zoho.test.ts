import t from 'tap';
import { formatCases } from './helpers/bounce-format.js';

/** Zoho Mail's bounces and delay warnings (formats/zoho.ts). */
await formatCases(t, { groups: ['Zoho'], format: /^Zoho$/ });
