-- Least privilege for the tenant role (cartero_tenant, the role every withTenant transaction runs
-- as: domain/tenancy/context.ts).
--
-- Until now 001's ALTER DEFAULT PRIVILEGES gave it SELECT, INSERT, UPDATE and DELETE on every
-- table created in public, so it could read service_secrets (the keys that sign tracking links
-- and report tags) and write instances, service_secrets and worker_heartbeats: a bug or an
-- injection inside a tenant transaction could forge every tenant's links or disable instances.
--
-- RULE FOR EVERY LATER MIGRATION: tables in public are closed to cartero_tenant by default. A
-- migration that creates a table tenant code must touch GRANTs exactly the privileges that code
-- uses (and, if the table holds tenant rows, enables row-level security with a tenant_isolation
-- policy). test/db-roles.test.ts fails when a table the tenant role can read has no row-level
-- security, unless it is listed there as shared on purpose.
--
-- The grants below were audited against every statement run inside withTenant (api routes,
-- send worker, inbound reports, restrictions, soft bounces, on-hold release, CLI restrictions).
-- Nothing tenant-side deletes rows (lifting a restriction sets deleted_at; retention, outbox
-- cleanup and lease cleanup run as the service role), so no table grants DELETE.

-- Close the defaults, for whichever role set them in 001 (usually the migrating role itself).
DO $$
DECLARE
  r record;
BEGIN
  FOR r IN
    SELECT DISTINCT pg_get_userbyid(d.defaclrole) AS owner
      FROM pg_default_acl d
      JOIN pg_namespace n ON n.oid = d.defaclnamespace
     WHERE n.nspname = 'public'
       AND EXISTS (SELECT 1 FROM aclexplode(d.defaclacl) a
                    WHERE a.grantee = (SELECT oid FROM pg_roles WHERE rolname = 'cartero_tenant'))
  LOOP
    EXECUTE format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA public REVOKE ALL ON TABLES FROM cartero_tenant', r.owner);
    EXECUTE format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA public REVOKE ALL ON SEQUENCES FROM cartero_tenant', r.owner);
  END LOOP;
END
$$;

-- Start from nothing, then grant per table what tenant code uses. Identity columns draw from
-- their sequences without a sequence privilege, so sequences stay closed.
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM cartero_tenant;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM cartero_tenant;

-- Shared tables, read-only. instances: its own row's limits and quota (accept, send gates,
-- on-hold release); row-level security below keeps the other instances out of sight.
-- send_leases: whether a worker holding a queued mail still lives (send gates); worker ids and
-- expiry times only, not tenant data, so no policy.
GRANT SELECT ON instances TO cartero_tenant;
GRANT SELECT ON send_leases TO cartero_tenant;

ALTER TABLE instances ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON instances USING (id = cartero_current_instance());

-- api_keys: no tenant code reads it (authentication runs as the service role); the tenant may
-- see its own keys' rows (never the tokens, only their hashes) and change none.
GRANT SELECT ON api_keys TO cartero_tenant;

-- Tenant tables (row-level security since their migrations).
GRANT SELECT, INSERT, UPDATE ON domains TO cartero_tenant;            -- add, set checks
GRANT SELECT, INSERT, UPDATE ON senders TO cartero_tenant;            -- create, set consent
GRANT SELECT, INSERT, UPDATE ON bandwidth_buckets TO cartero_tenant;  -- token bucket at send
GRANT SELECT, INSERT, UPDATE ON quota_usage TO cartero_tenant;        -- quota claim (ON CONFLICT DO UPDATE)
GRANT SELECT, INSERT ON messages TO cartero_tenant;                   -- accept
GRANT SELECT, INSERT, UPDATE ON mails TO cartero_tenant;              -- accept, moves, FOR UPDATE locks
GRANT SELECT, INSERT ON mail_logs TO cartero_tenant;                  -- every move and note
GRANT SELECT, INSERT, UPDATE ON mail_restrictions TO cartero_tenant;  -- restrict, lift (deleted_at)
GRANT SELECT, INSERT ON mail_events TO cartero_tenant;                -- mail_logs trigger, complaints, unsubscribes; pending counts
GRANT SELECT, INSERT, UPDATE ON mail_unsubscribes TO cartero_tenant;  -- reason/comment completed later
GRANT SELECT, INSERT ON mail_complaints TO cartero_tenant;            -- inbound ARF
GRANT SELECT, INSERT, UPDATE ON mail_bounces TO cartero_tenant;       -- DSNs, soft-bounce evaluation

-- Service-only, named so a reader sees they are closed on purpose: service_secrets (signing
-- keys), worker_heartbeats (/readyz), schema_migrations. Nothing granted.
