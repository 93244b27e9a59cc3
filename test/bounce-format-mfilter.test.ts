import t from 'tap';
import { formatCases } from './helpers/bounce-format.js';

/** m-FILTER's bounces (formats/mfilter.ts). */
await formatCases(t, { groups: ['mFILTER'], format: /^mFILTER$/ });
