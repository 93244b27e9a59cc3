-- Idempotent sends (issue 41, docs/sending.md "Idempotency"): the key a send was accepted under,
-- with the answer it got, so a retry within 24 hours answers that answer again and sends nothing.
-- Two doors: 'api' (POST /v1/mails/send's Idempotency-Key, with the hash of the validated
-- request: another request under the key is 422 idempotency_key_reused) and 'smtp' (a
-- submitted message's Message-ID: the same id is a retry whatever the message). The scope is the
-- instance, not the sender: a sender changed or deleted between a send and its retry changes
-- nothing.
--
-- Written by domain/mail/idempotency.ts in the acceptance's own transaction, first (before any
-- gate) with a null answer and then settled with it, so a key exists iff its send committed, and
-- the unique key makes a concurrent duplicate wait for the first and then answer as a retry. A
-- key past 24 hours is taken over by the next send under it (the claim's ON CONFLICT updates only
-- an expired row), and the nightly retention job deletes the rest.
CREATE TABLE send_idempotency_keys (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id  bigint NOT NULL REFERENCES instances(id),
  door         text NOT NULL CHECK (door IN ('api', 'smtp')),
  -- The API's bound is the header's (1-255); a Message-ID is bounded by RFC 5322's line (998).
  key          text NOT NULL CHECK (length(key) >= 1 AND length(key) <= CASE door WHEN 'api' THEN 255 ELSE 998 END),
  request_hash text NOT NULL,
  -- The first answer ({msg_id, mails}), as sent: json, not jsonb, keeps its text (key order).
  -- Null only inside the accepting transaction.
  response     json,
  created_at   timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT send_idempotency_keys_key UNIQUE (instance_id, door, key)
);
-- The retention purge's range.
CREATE INDEX send_idempotency_keys_created_idx ON send_idempotency_keys (created_at);

ALTER TABLE send_idempotency_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON send_idempotency_keys USING (instance_id = cartero_current_instance());

-- Grants (009's rule: exactly what tenant code uses; the purge runs as the service role).
GRANT SELECT, INSERT ON send_idempotency_keys TO cartero_tenant;                                -- look up, claim
GRANT UPDATE (request_hash, response, created_at) ON send_idempotency_keys TO cartero_tenant;   -- settle; take over an expired key
