-- Sending: messages (one per send call), mails (one per recipient), their state moves, the
-- per-instance bandwidth bucket and monthly quota, and the restrictions that drop recipients.

-- Sending limits, NULL = unlimited. Set with `cartero instance set-limits`.
ALTER TABLE instances
  ADD COLUMN send_rate_per_second double precision CHECK (send_rate_per_second > 0),
  ADD COLUMN send_burst integer CHECK (send_burst > 0),
  ADD COLUMN monthly_quota integer CHECK (monthly_quota >= 0);

-- Token bucket shared by every web dyno: one row per instance, refilled lazily at each send.
CREATE TABLE bandwidth_buckets (
  instance_id bigint PRIMARY KEY REFERENCES instances(id),
  tokens      double precision NOT NULL,
  refilled_at timestamptz NOT NULL
);

-- Mails counted against the monthly quota (UTC months), claimed by the worker before sending.
CREATE TABLE quota_usage (
  instance_id bigint NOT NULL REFERENCES instances(id),
  month       date NOT NULL,
  used        integer NOT NULL DEFAULT 0,
  PRIMARY KEY (instance_id, month)
);

-- One row per POST /v1/mails/send: the content shared by all its recipients.
CREATE TABLE messages (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id       bigint NOT NULL REFERENCES instances(id),
  msg_id            text NOT NULL,
  sender_id         bigint NOT NULL,
  from_email        text NOT NULL,
  from_name         text,
  subject           text NOT NULL,
  html              text,
  text_body         text,
  reply_to          text,
  headers           jsonb NOT NULL DEFAULT '{}',
  attachments       jsonb NOT NULL DEFAULT '[]',
  variables         jsonb NOT NULL DEFAULT '{}',
  test_mode         boolean NOT NULL DEFAULT false,
  track_opens       boolean NOT NULL DEFAULT true,
  track_clicks      boolean NOT NULL DEFAULT true,
  custom_msg_id     text,
  custom_group_code text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (instance_id, msg_id),
  UNIQUE (instance_id, id)
);

-- One row per recipient. status: 1 received, 2 queued, 3 sent, 4 dropped, 5 deferred,
-- 6 bounced, 7 onhold. mail_id is a ULID: it carries its creation time, so an id older than
-- the retention window is recognisable after its row is purged.
CREATE TABLE mails (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id       bigint NOT NULL REFERENCES instances(id),
  mail_id           text NOT NULL UNIQUE,
  message_id        bigint NOT NULL,
  msg_id            text NOT NULL,
  sender_id         bigint,
  sender            text,
  to_email          text NOT NULL,
  to_name           text,
  variables         jsonb NOT NULL DEFAULT '{}',
  subject           text NOT NULL,
  status            smallint NOT NULL CHECK (status BETWEEN 1 AND 7),
  bounce_class      text CHECK (bounce_class IN ('hard', 'soft')),
  attempts          integer NOT NULL DEFAULT 0,
  received_at       timestamptz NOT NULL DEFAULT now(),
  queued_at         timestamptz,
  sent_at           timestamptz,
  delay             double precision,
  opens             integer NOT NULL DEFAULT 0,
  clicks            integer NOT NULL DEFAULT 0,
  custom_msg_id     text,
  custom_group_code text,
  updated_at        timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (instance_id, message_id) REFERENCES messages (instance_id, id) ON DELETE CASCADE
);
CREATE INDEX mails_received_idx ON mails (instance_id, received_at DESC, id DESC);
CREATE INDEX mails_msg_idx ON mails (instance_id, msg_id);
CREATE INDEX mails_to_idx ON mails (instance_id, to_email text_pattern_ops);
CREATE INDEX mails_onhold_idx ON mails (instance_id, received_at) WHERE status = 7;

-- Every state move of a mail, oldest first: the reason or the SMTP reply that caused it.
CREATE TABLE mail_logs (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id  bigint NOT NULL REFERENCES instances(id),
  mail_id      text NOT NULL REFERENCES mails(mail_id) ON DELETE CASCADE,
  status       smallint NOT NULL CHECK (status BETWEEN 1 AND 7),
  reason       text,
  smtp_code    integer,
  smtp_enhanced text,
  smtp_reply   text,
  attempt      integer,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mail_logs_mail_idx ON mail_logs (mail_id, id);

-- The state of an address (spec: Restriction). Panel-only creation; issue 4 adds the listing,
-- bounces and unsubscribes that create them. deleted_at set = lifted.
CREATE TABLE mail_restrictions (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id   bigint NOT NULL REFERENCES instances(id),
  recipient     text NOT NULL CHECK (recipient = lower(recipient)),
  reason        text,
  restricted_at timestamptz NOT NULL DEFAULT now(),
  deleted_at    timestamptz
);
-- At most one restriction in force per address.
CREATE UNIQUE INDEX mail_restrictions_active_idx ON mail_restrictions (instance_id, recipient) WHERE deleted_at IS NULL;
CREATE INDEX mail_restrictions_time_idx ON mail_restrictions (instance_id, restricted_at DESC);

ALTER TABLE bandwidth_buckets ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON bandwidth_buckets USING (instance_id = cartero_current_instance());
ALTER TABLE quota_usage ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON quota_usage USING (instance_id = cartero_current_instance());
ALTER TABLE messages ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON messages USING (instance_id = cartero_current_instance());
ALTER TABLE mails ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mails USING (instance_id = cartero_current_instance());
ALTER TABLE mail_logs ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mail_logs USING (instance_id = cartero_current_instance());
ALTER TABLE mail_restrictions ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mail_restrictions USING (instance_id = cartero_current_instance());

-- Secrets the service generates for itself and every dyno must share (e.g. the key that signs
-- tracking and unsubscribe links). Not tenant data.
CREATE TABLE service_secrets (
  name       text PRIMARY KEY,
  value      text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
