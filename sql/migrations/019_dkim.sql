-- DKIM keys of sending domains and the time of their last DNS check (issue 17).
-- domain/domains/dkim-keys.ts and domain/domains/dns-verify.ts own every statement on these.

-- One row per key a domain has had. The private key is stored only encrypted (AES-256-GCM under
-- DKIM_KEY_ENCRYPTION_KEY: domain/domains/key-encryption.ts); key_ring_id names the encryption key
-- it was sealed with, so a process with another key says so instead of failing obscurely.
-- status is the check of this key's own TXT record at <selector>._domainkey.<domain>; the
-- domain's dkim_status follows its live keys (dns-verify.ts). A key is retired once a newer key
-- of its domain has verified: it signs nothing more and is no longer checked.
CREATE TABLE dkim_keys (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id     bigint NOT NULL,
  domain_id       bigint NOT NULL,
  selector        text NOT NULL CHECK (selector ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'),
  -- The public key, base64 DER (SubjectPublicKeyInfo): the p= tag of the record to publish.
  public_key      text NOT NULL,
  private_key_enc bytea NOT NULL,
  key_ring_id     text NOT NULL,
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'failed')),
  created_at      timestamptz NOT NULL DEFAULT now(),
  retired_at      timestamptz,
  FOREIGN KEY (instance_id, domain_id) REFERENCES domains (instance_id, id),
  UNIQUE (instance_id, domain_id, selector)
);
CREATE INDEX dkim_keys_live_idx ON dkim_keys (instance_id, domain_id) WHERE retired_at IS NULL;

ALTER TABLE dkim_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON dkim_keys USING (instance_id = cartero_current_instance());
-- add and rotate insert; verification updates status and retired_at; the send worker reads.
GRANT SELECT, INSERT, UPDATE ON dkim_keys TO cartero_tenant;

-- When the records were last resolved (null: never); a resolver that did not answer changes nothing.
-- checks_overridden: the operator set the checks by hand (`cartero domain set-checks`, for closed
-- networks); the scheduled verification leaves such a domain alone until `cartero domain verify`
-- resolves it again.
ALTER TABLE domains ADD COLUMN dns_checked_at timestamptz;
ALTER TABLE domains ADD COLUMN checks_overridden boolean NOT NULL DEFAULT false;
