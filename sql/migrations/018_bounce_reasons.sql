-- Why a mail bounced, in the bounce classifier's vocabulary (domain/bounces/reason.ts: userunknown,
-- mailboxfull, blocked, ...), decided from the enhanced status, the reply code and the remote
-- server's words, for synchronous SMTP replies and late reports alike. Null on rows written
-- before the classifier existed.
ALTER TABLE mail_bounces ADD COLUMN reason text;

-- The log row of a move to bounced carries the same reason (GET /v1/mails/{mail_id}/logs shows it
-- as bounce_reason); the row's own `reason` keeps saying what moved the mail (dsn,
-- deferred_retries_exhausted, ...). A delay report's note (dsn_delayed) carries it too.
ALTER TABLE mail_logs ADD COLUMN bounce_reason text;

-- The bounce that caused a hard_bounce restriction: its history row says which report or reply
-- restricted the address. Null for restrictions made otherwise (panel, unsubscribe, the
-- soft-bounce threshold) and for those older than this column. The bounce may be purged with
-- its mail by retention; the restriction stays.
ALTER TABLE mail_restrictions ADD COLUMN bounce_id bigint REFERENCES mail_bounces(id) ON DELETE SET NULL;
CREATE INDEX mail_restrictions_bounce_idx ON mail_restrictions (bounce_id) WHERE bounce_id IS NOT NULL;
