-- Sending domains and senders. A domain is verified only when all four DNS checks are approved.
-- is_verified is a generated column: Postgres recomputes it whenever a check changes, so every
-- query (the domain's own and a sender's domain_is_verified) reads the current state.

CREATE TABLE domains (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id  bigint NOT NULL REFERENCES instances(id),
  name         text NOT NULL CHECK (name = lower(name) AND name ~ '^[a-z0-9.-]+$'),
  mx_status    text NOT NULL DEFAULT 'pending' CHECK (mx_status IN ('pending', 'approved', 'failed')),
  spf_status   text NOT NULL DEFAULT 'pending' CHECK (spf_status IN ('pending', 'approved', 'failed')),
  dkim_status  text NOT NULL DEFAULT 'pending' CHECK (dkim_status IN ('pending', 'approved', 'failed')),
  dmarc_status text NOT NULL DEFAULT 'pending' CHECK (dmarc_status IN ('pending', 'approved', 'failed')),
  is_verified  boolean NOT NULL GENERATED ALWAYS AS (
    mx_status = 'approved' AND spf_status = 'approved' AND dkim_status = 'approved' AND dmarc_status = 'approved'
  ) STORED,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (instance_id, name),
  UNIQUE (instance_id, id)  -- target of the senders composite key
);

CREATE TABLE senders (
  id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id         bigint NOT NULL REFERENCES instances(id),
  domain_id           bigint NOT NULL,
  name                text NOT NULL,
  email_address       text NOT NULL CHECK (email_address = lower(email_address)),
  is_consent_required boolean NOT NULL DEFAULT false,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  UNIQUE (instance_id, email_address),
  -- A sender can only point at a domain of its own instance.
  FOREIGN KEY (instance_id, domain_id) REFERENCES domains (instance_id, id)
);
CREATE INDEX senders_domain_idx ON senders (instance_id, domain_id);

ALTER TABLE domains ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON domains USING (instance_id = cartero_current_instance());
ALTER TABLE senders ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON senders USING (instance_id = cartero_current_instance());
