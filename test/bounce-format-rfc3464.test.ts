import t from 'tap';
import { formatCases } from './helpers/bounce-format.js';

/** RFC 3464 DSNs of every MTA and provider (formats/rfc3464.ts, dsn.ts): the reason from the diagnostic's words, the status and the refused command. */
await formatCases(t, { format: /^RFC3464( \(forwarded\)| \(damaged MIME, read as text\))?$/, minAgreement: 0.9, shapes: ['rfc3464'] });
