import t from 'tap';
import { formatCases } from './helpers/bounce-format.js';

/** Trend Micro InterScan MSS notices (formats/interscan.ts). */
await formatCases(t, { groups: ['InterScanMSS'], format: /^InterScanMSS$/ });
