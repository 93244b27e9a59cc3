import type { TextFormat } from './text.js';

/**
 * Google Groups refusing a post (the group does not exist, or the sender may not post), in the
 * reader's language: a refusal of the sender, never of a recipient's address (reason rejected).
 */
export const googlegroups: TextFormat = {
  name: 'GoogleGroups',
  detect: (m) => /groups\.google\.com|Google Groups|Google-Groups/i.test(m.text) && /Delivery Status Notification/i.test(m.subject),
  end: [/^-{3,} ?Original message ?-{3,}/im],
  reason: 'rejected',
};
