import t from 'tap';
import { formatCases } from './helpers/bounce-format.js';

/** Feedback-loop reports (ARF), unsubscribe requests and auto-replies: complaints are recorded (auth-failure reports are read, not recorded: they are no person's complaint), auto-replies change nothing. */
await formatCases(t, { groups: ['ARF', 'RFC3834'], format: /^(ARF|auto-reply|unsubscribe request)$/, minAgreement: 0.6 });
