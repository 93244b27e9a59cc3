-- Tenancy: instances, API keys, and the role that row-level security applies to.
--
-- The service usually connects as a superuser or table owner, both of which bypass RLS. Every
-- tenant-scoped transaction therefore switches to the NOLOGIN role cartero_tenant (SET LOCAL ROLE),
-- whose rows are limited by the policy below: a second wall behind the instance_id in every WHERE.
DO $$
BEGIN
  CREATE ROLE cartero_tenant NOLOGIN;
EXCEPTION
  -- Roles are cluster-wide: another database (or a concurrent migrator) may have created it.
  WHEN duplicate_object OR unique_violation THEN NULL;
END
$$;

-- A non-superuser service role (a managed Postgres) must be a member to SET ROLE to it.
DO $$
BEGIN
  EXECUTE format('GRANT cartero_tenant TO %I', current_user);
EXCEPTION
  WHEN OTHERS THEN RAISE NOTICE 'could not grant cartero_tenant to %: %', current_user, SQLERRM;
END
$$;

GRANT USAGE ON SCHEMA public TO cartero_tenant;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO cartero_tenant;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO cartero_tenant;

CREATE TABLE instances (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  slug          text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
  name          text NOT NULL,
  tz            text,                       -- IANA zone; NULL means UTC for date filters
  enabled       boolean NOT NULL DEFAULT true,
  allowed_cidrs cidr[] NOT NULL DEFAULT '{}', -- empty: every address allowed
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id   bigint NOT NULL REFERENCES instances(id),
  key_id        text NOT NULL UNIQUE,
  token_sha256  bytea NOT NULL,             -- the token itself is never stored
  scopes        text[] NOT NULL,
  allowed_cidrs cidr[] NOT NULL DEFAULT '{}',
  expires_at    timestamptz,
  revoked_at    timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_keys_instance_idx ON api_keys (instance_id);

-- The current tenant of a transaction, set with set_config('cartero.instance_id', ..., true).
CREATE FUNCTION cartero_current_instance() RETURNS bigint
  LANGUAGE sql STABLE
  AS $$ SELECT nullif(current_setting('cartero.instance_id', true), '')::bigint $$;

ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON api_keys USING (instance_id = cartero_current_instance());

GRANT SELECT ON instances TO cartero_tenant;
GRANT SELECT, INSERT, UPDATE, DELETE ON api_keys TO cartero_tenant;
