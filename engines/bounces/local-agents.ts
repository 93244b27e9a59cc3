import type { BounceReason } from './reason-names.js';

/**
 * The final hop's local delivery agent (dovecot's LDA, mail.local, maildrop, vpopmail's
 * vdelivermail, vmailmgr's vdeliver, procmail) writes its own refusal, which an MTA quotes after
 * the message was accepted ("... said: ..." after DATA, or with no command at all). These agents
 * look the user up themselves, so their "unknown user" is the directory's answer, unlike a
 * remote server's terse reply after DATA. Read only for text with no command or DATA (reason.ts).
 */
const AGENTS: ReadonlyArray<{ agent: RegExp; says: ReadonlyArray<readonly [BounceReason, RegExp]> }> = [
  {
    // Dovecot's LDA/LMTP rejection template.
    agent: /your message to <?[^>\s]+>? was automatically rejected/,
    says: [
      ['userunknown', /mailbox doesn'?t exist|no such user/],
      ['mailboxfull', /quota exceeded|not enough disk space|mailbox is full/],
    ],
  },
  { agent: /mail\.local:/, says: [['userunknown', /unknown user|user unknown|invalid mailbox path/]] },
  { agent: /maildrop:/, says: [['userunknown', /cannot find system user|unknown user/], ['mailboxfull', /maildir over quota|quota exceeded/]] },
  {
    agent: /vdelivermail:/,
    says: [
      ['filtered', /user does not exist, but will deliver to/],
      ['userunknown', /no mailbox here by that name|invalid or unknown (?:virtual )?user/],
      ['suspend', /account is locked/],
    ],
  },
  { agent: /vdeliver:/, says: [['userunknown', /invalid or unknown virtual user/]] },
  { agent: /procmail:/, says: [] },
];

/** The reason a local delivery agent's refusal states (normalized text), `mailererror` for an agent's other failures. */
export function localAgentReason(text: string): BounceReason | undefined {
  for (const { agent, says } of AGENTS) {
    if (!agent.test(text)) continue;
    for (const [reason, re] of says) if (re.test(text)) return reason;
    return 'mailererror';
  }
  return undefined;
}
