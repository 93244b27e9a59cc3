-- The operator panel's people (issue 30, docs/panel.md): panel users, their membership of
-- instances with a role, and their login sessions.
--
-- Service role only, like api_keys' authentication: every statement runs outside withTenant
-- (authentication decides the tenant, so it cannot run as one) and names its instance_id.
-- Nothing is granted to cartero_tenant (009's rule: closed by default); panel_members still gets
-- row-level security with the tenant_isolation policy, a second wall should a later migration
-- grant it to tenant code.

-- A person who signs in to the panel. Not a tenant row: one user may be a member of many instances.
CREATE TABLE panel_users (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  email         text NOT NULL CHECK (length(email) <= 320),
  -- Self-describing: $scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt>$<hash> (domain/panel/passwords.ts).
  password_hash text NOT NULL,
  disabled_at   timestamptz,                -- set: no login, every session gone
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
-- One user per address whatever its case (logins look it up by lower(email)).
CREATE UNIQUE INDEX panel_users_email_key ON panel_users (lower(email));

-- A user's role in an instance: viewer reads; admin writes; owner also manages members and keys.
CREATE TABLE panel_members (
  instance_id bigint NOT NULL REFERENCES instances(id),
  user_id     bigint NOT NULL REFERENCES panel_users(id),
  role        text NOT NULL CHECK (role IN ('owner', 'admin', 'viewer')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (instance_id, user_id)
);
CREATE INDEX panel_members_user_idx ON panel_members (user_id);

ALTER TABLE panel_members ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON panel_members USING (instance_id = cartero_current_instance());

-- A login. Only sha256(token) is stored; the token is shown once, in the login's answer.
-- Sliding expiry: every authenticated request moves expires_at to now() + PANEL_SESSION_TTL_SECONDS.
-- Ending a session (logout, user disabled, password reset) deletes its row.
CREATE TABLE panel_sessions (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  token_sha256 bytea NOT NULL UNIQUE,
  user_id      bigint NOT NULL REFERENCES panel_users(id),
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL
);
CREATE INDEX panel_sessions_user_idx ON panel_sessions (user_id);
CREATE INDEX panel_sessions_expires_idx ON panel_sessions (expires_at);
