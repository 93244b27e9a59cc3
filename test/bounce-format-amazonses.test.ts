import t from 'tap';
import { formatCases } from './helpers/bounce-format.js';

/** Amazon SES: JSON notifications by mail (formats/amazonses.ts) and its RFC 3464 DSNs (the remote reply quoted in SES's diagnostic). */
await formatCases(t, { groups: ['AmazonSES'], format: /^(AmazonSES|RFC3464)$/, minAgreement: 0.9 });
