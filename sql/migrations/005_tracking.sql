-- Tracking and the loop back from sent mail: the event outbox (opens, clicks, unsubscribes,
-- complaints on their way to ClickHouse, and later to webhooks), unsubscribe and complaint
-- event logs, and the bounces that feed the soft-bounce threshold.

-- The reasons Cartero writes (the spec's vocabulary; clients must tolerate new ones, but we only
-- ever write these).
UPDATE mail_restrictions SET reason = 'unsubscribe' WHERE reason = 'unsubscribed';
ALTER TABLE mail_restrictions
  ADD CONSTRAINT mail_restrictions_reason_check CHECK (reason IN ('unspecified', 'unsubscribe', 'soft_bounce', 'hard_bounce'));
CREATE INDEX mail_restrictions_recipient_idx ON mail_restrictions (instance_id, recipient, restricted_at DESC);

-- The outbox. A row is written (and committed) before a tracking endpoint answers, so an event
-- is durable the moment it is acknowledged. The worker's event pump then moves each row:
--   stage 0 (new) -> counted into mails.opens / mails.clicks, flagged, and
--   stage 1 (counted, not yet in ClickHouse) -> stage 2 (in ClickHouse).
-- A ClickHouse outage leaves rows at stage 1; they are shipped when it is back. Shipped rows are
-- kept a day (scanner detection looks at recent clicks of a mail; webhooks will read them) and
-- then deleted by housekeeping. No foreign key to mails: the tracking endpoints insert at high
-- rates and a purged mail's late events are simply not recorded (the insert joins mails).
CREATE TABLE mail_events (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id bigint NOT NULL,
  mail_id     text NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('open', 'click', 'unsubscribe', 'complaint')),
  url         text,
  user_agent  text,
  ip          inet,
  occurred_at timestamptz NOT NULL DEFAULT now(),
  -- Why the pump thinks a machine made this event (privacy proxy, link scanner), or null.
  machine     text,
  stage       smallint NOT NULL DEFAULT 0 CHECK (stage IN (0, 1, 2))
);
CREATE INDEX mail_events_new_idx ON mail_events (id) WHERE stage = 0;
CREATE INDEX mail_events_unshipped_idx ON mail_events (id) WHERE stage = 1;
CREATE INDEX mail_events_mail_idx ON mail_events (mail_id, occurred_at);
CREATE INDEX mail_events_shipped_idx ON mail_events (occurred_at) WHERE stage = 2;

-- One row per unsubscribed mail (spec: an event log bounded by the retention of its mail). The
-- first unsubscribe is kept; reason and comment are completed if they arrive later.
CREATE TABLE mail_unsubscribes (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id     bigint NOT NULL REFERENCES instances(id),
  mail_id         text NOT NULL UNIQUE REFERENCES mails(mail_id) ON DELETE CASCADE,
  recipient       text NOT NULL,
  -- 'one_click' (RFC 8058 POST from the mail client) or 'page' (the confirmation page's form).
  method          text NOT NULL CHECK (method IN ('one_click', 'page')),
  reason          text,
  comment         text,
  user_agent      text,
  ip              inet,
  unsubscribed_at timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mail_unsubscribes_time_idx ON mail_unsubscribes (instance_id, unsubscribed_at DESC, id DESC);

-- Feedback-loop complaints (ARF, RFC 5965). One row per mail: a mailbox provider resending the
-- same report does not count twice. A complaint alone restricts nothing (spec).
CREATE TABLE mail_complaints (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id   bigint NOT NULL REFERENCES instances(id),
  mail_id       text NOT NULL UNIQUE REFERENCES mails(mail_id) ON DELETE CASCADE,
  recipient     text NOT NULL,
  feedback_type text NOT NULL,
  -- The reporting system (the report's User-Agent field) and its Arrival-Date, when given.
  reported_by   text,
  arrival_date  timestamptz,
  complained_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mail_complaints_time_idx ON mail_complaints (instance_id, complained_at DESC, id DESC);

-- Every bounce, synchronous (SMTP reply) or asynchronous (DSN). Soft ones are counted per
-- address by the threshold job; evaluated = false marks the ones it has not looked at yet.
CREATE TABLE mail_bounces (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id   bigint NOT NULL REFERENCES instances(id),
  mail_id       text NOT NULL REFERENCES mails(mail_id) ON DELETE CASCADE,
  recipient     text NOT NULL CHECK (recipient = lower(recipient)),
  class         text NOT NULL CHECK (class IN ('hard', 'soft')),
  source        text NOT NULL CHECK (source IN ('smtp', 'dsn')),
  smtp_enhanced text,
  diagnostic    text,
  bounced_at    timestamptz NOT NULL DEFAULT now(),
  evaluated     boolean NOT NULL DEFAULT false
);
CREATE INDEX mail_bounces_recipient_idx ON mail_bounces (instance_id, recipient, bounced_at) WHERE class = 'soft';
CREATE INDEX mail_bounces_pending_idx ON mail_bounces (instance_id) WHERE class = 'soft' AND NOT evaluated;
CREATE INDEX mail_bounces_mail_idx ON mail_bounces (mail_id);

ALTER TABLE mail_events ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mail_events USING (instance_id = cartero_current_instance());
ALTER TABLE mail_unsubscribes ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mail_unsubscribes USING (instance_id = cartero_current_instance());
ALTER TABLE mail_complaints ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mail_complaints USING (instance_id = cartero_current_instance());
ALTER TABLE mail_bounces ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mail_bounces USING (instance_id = cartero_current_instance());
