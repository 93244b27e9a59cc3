-- Each mail's mailbox provider (issue 40, docs/deliverability.md): gmail, yahoo, microsoft,
-- google_workspace... (engines/providers/table.ts), set at acceptance from the recipient's domain,
-- by name for the consumer domains, by MX for the others, 'other' while a domain's MX is not
-- known yet. Stored, not derived at read time: a mail keeps the provider it was sent to even when
-- the domain later moves, and ClickHouse's mirror groups by it (analytics/migrations/009).
-- Mails accepted before this column existed are 'other' (their domains were never resolved).
ALTER TABLE mails ADD COLUMN provider text NOT NULL DEFAULT 'other';

-- The MX verdicts, per recipient domain: the cache acceptance reads in its own statement, shared
-- by every dyno. A domain acceptance meets for the first time gets a row with provider NULL and a
-- resolve job in the same transaction (workers/jobs/provider-mx.ts), which looks its MX up through
-- DNS_SERVERS and fills the row; until then its mails count as 'other'. A row whose verdict is
-- past expires_at is still used, and acceptance marks it refresh_wanted (once) with a new job.
-- Rows not wanted for 30 days after they expired are purged (the retention job), so the table
-- holds the domains in use.
--
-- Not tenant data: an MX record is public, and no row says which instance sent to the domain.
-- Tenant code reads and inserts it in acceptance's transaction; only the service role updates
-- and purges.
CREATE TABLE recipient_domains (
  domain         text PRIMARY KEY,
  provider       text,
  resolved_at    timestamptz,
  expires_at     timestamptz,
  refresh_wanted boolean NOT NULL DEFAULT false,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX recipient_domains_expiry_idx ON recipient_domains (expires_at);
GRANT SELECT, INSERT ON recipient_domains TO cartero_tenant;
GRANT UPDATE (refresh_wanted) ON recipient_domains TO cartero_tenant;
