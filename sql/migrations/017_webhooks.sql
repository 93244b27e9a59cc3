-- Webhooks (issue 16; docs/webhooks.md): endpoints, the events they get, every delivery and
-- every attempt. Events come from the event outbox (011), which every change writes in its own
-- transaction; a webhook stage over the outbox (workers/jobs/webhook-fanout.ts) turns each row into
-- a frozen event body and one delivery per subscribed webhook, and marks the row, all in one
-- transaction: a crash before the commit leaves the row unmarked (done again), after it the
-- deliveries exist. Nothing is lost or invented.

-- The webhook stage's mark. Rows already in the outbox when this runs are marked (the column's
-- first default is stored once in the catalog, no rewrite): no webhook existed to get them. New
-- rows start unmarked. The outbox housekeeping deletes only marked rows (domain/outbox/pump.ts).
ALTER TABLE event_outbox ADD COLUMN webhooks_done boolean NOT NULL DEFAULT true;
ALTER TABLE event_outbox ALTER COLUMN webhooks_done SET DEFAULT false;
CREATE INDEX event_outbox_webhooks_pending_idx ON event_outbox (id) WHERE NOT webhooks_done;

CREATE TABLE webhooks (
  id                         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id                bigint NOT NULL REFERENCES instances(id),
  name                       text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  url                        text NOT NULL CHECK (char_length(url) <= 2048),
  -- null: every event type.
  events                     text[],
  is_active                  boolean NOT NULL DEFAULT true,
  -- whsec_<base64>: kept readable, since every delivery is signed with it (HMAC needs the key).
  secret                     text NOT NULL,
  previous_secret            text,
  previous_secret_expires_at timestamptz,
  last_success_at            timestamptz,
  last_failure_at            timestamptz,
  last_status_code           integer,
  consecutive_failures       integer NOT NULL DEFAULT 0,
  failing_since              timestamptz,
  auto_paused_at             timestamptz,
  created_at                 timestamptz NOT NULL DEFAULT now(),
  updated_at                 timestamptz NOT NULL DEFAULT now(),
  UNIQUE (instance_id, id)
);
CREATE INDEX webhooks_instance_idx ON webhooks (instance_id, id);

-- One row per outbox event of an instance that has webhooks: the body as signed (text, so the
-- bytes never change between retries and replays). The id is the outbox row's: the webhook-id
-- header is derived from it. Kept WEBHOOK_RETENTION_DAYS (replay reads here, not the outbox).
CREATE TABLE webhook_events (
  id          bigint PRIMARY KEY,
  instance_id bigint NOT NULL REFERENCES instances(id),
  type        text NOT NULL,
  mail_id     text,
  -- webhook.test: the webhook it is for.
  webhook_id  bigint,
  occurred_at timestamptz NOT NULL,
  body        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_events_time_idx ON webhook_events (instance_id, occurred_at, id);
CREATE INDEX webhook_events_created_idx ON webhook_events (created_at);

-- One row per event a webhook is to get (fan-out, a replay or a manual retry). mail_id orders a
-- mail's deliveries per webhook: one waits while an older one of its chain is pending.
CREATE TABLE webhook_deliveries (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id     bigint NOT NULL,
  webhook_id      bigint NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  event_id        bigint NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
  mail_id         text,
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed', 'cancelled')),
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  -- Set while an attempt is in flight; a worker that died mid-attempt leaves it to lapse.
  leased_until    timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  finished_at     timestamptz
);
CREATE INDEX webhook_deliveries_chain_idx ON webhook_deliveries (webhook_id, mail_id, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_leased_idx ON webhook_deliveries (webhook_id) WHERE leased_until IS NOT NULL;
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id);

-- Every attempt: written when it starts (finished false), completed with its outcome. One left
-- unfinished by a killed worker is closed as interrupted by the next attempt of its delivery.
CREATE TABLE webhook_attempts (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id  bigint NOT NULL,
  webhook_id   bigint NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  delivery_id  bigint NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  event_id     bigint NOT NULL,
  attempt      integer NOT NULL,
  attempted_at timestamptz NOT NULL DEFAULT now(),
  finished     boolean NOT NULL DEFAULT false,
  succeeded    boolean NOT NULL DEFAULT false,
  duration_ms  integer,
  status_code  integer,
  error        text,
  -- The first 1 KB of the answer.
  response     text
);
CREATE INDEX webhook_attempts_webhook_idx ON webhook_attempts (webhook_id, id DESC);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id);

-- restriction.created / restriction.lifted, in the transaction of the change whatever writes it
-- (domain/restrictions, the hard-bounce move of domain/mail/transitions.ts, the CLI): a trigger,
-- like the mail_logs one, so no writer can forget it.
CREATE FUNCTION cartero_restrictions_to_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO event_outbox (instance_id, kind, entity_id, occurred_at) VALUES (NEW.instance_id, 'restriction.created', NEW.id, NEW.restricted_at);
  ELSIF OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL THEN
    INSERT INTO event_outbox (instance_id, kind, entity_id, occurred_at) VALUES (NEW.instance_id, 'restriction.lifted', NEW.id, NEW.deleted_at);
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER mail_restrictions_to_outbox AFTER INSERT OR UPDATE OF deleted_at ON mail_restrictions
  FOR EACH ROW EXECUTE FUNCTION cartero_restrictions_to_outbox();

ALTER TABLE webhooks ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON webhooks USING (instance_id = cartero_current_instance());
ALTER TABLE webhook_events ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON webhook_events USING (instance_id = cartero_current_instance());
ALTER TABLE webhook_deliveries ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON webhook_deliveries USING (instance_id = cartero_current_instance());
ALTER TABLE webhook_attempts ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON webhook_attempts USING (instance_id = cartero_current_instance());

-- Grants (009's rule). The API creates, edits, pauses, resumes and deletes webhooks, reads the
-- log, and queues replays and retries (deliveries); the worker (service role) does the rest.
-- No DELETE (009's rule): DELETE /v1/webhooks/{id} runs as the service role with the instance in
-- its WHERE clause (domain/webhooks/webhooks.ts), its deliveries and attempts going by cascade.
GRANT SELECT, INSERT ON webhooks TO cartero_tenant;
GRANT UPDATE (name, url, events, is_active, secret, previous_secret, previous_secret_expires_at, auto_paused_at,
              consecutive_failures, failing_since, updated_at) ON webhooks TO cartero_tenant;   -- PATCH (a resume clears the streak), rotation
GRANT SELECT ON webhook_events TO cartero_tenant;
GRANT SELECT, INSERT ON webhook_deliveries TO cartero_tenant;
GRANT UPDATE (status, finished_at) ON webhook_deliveries TO cartero_tenant;                   -- a pause cancels pending ones
GRANT SELECT ON webhook_attempts TO cartero_tenant;
