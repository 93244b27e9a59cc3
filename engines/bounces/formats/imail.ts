import type { TextFormat } from './text.js';

/** Ipswitch IMail Server: one line "<reason>: <address>" (or "undeliverable to <address>" and the reply), then "Original message follows." */
export const imail: TextFormat = {
  name: 'IMailServer',
  detect: (m) => /^Undeliverable Mail\s*$/i.test(m.subject.trim()) && (/^Original message follows\./m.test(m.text) || /Body of message generated response:/i.test(m.text)),
  end: [/^Original message follows\./m, /^Save to the following Address Book/m],
  // Its notice names the cause before the address; these are its own directory's answers.
  states: [
    ['userunknown', /^[ \t]*(?:unknown user|invalid final delivery userid|user not found)[ \t]*:/im],
    ['mailboxfull', /^[ \t]*(?:user mailbox exceeds allowed size|mailbox full)[ \t]*:/im],
  ],
};
