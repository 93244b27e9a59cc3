-- DMARC aggregate reports (issue 39, docs/dmarc.md). The inbound listener (smtp/inbound.ts) reads
-- a report sent to dmarc@<return-path host of a domain> and stores it here, in the transaction
-- that also appends its domain.dmarc_report event to the outbox, before it answers 250: the
-- answer means the report is durable, and a report resent (reporters retry, and some send the
-- same report in RFC 7489 and RFC 9990 form) is one row, one event.
--
-- Postgres is the ledger, ClickHouse the place it is read (analytics/migrations/008): the
-- records wait here (records, jsonb) until the worker's DMARC shipper
-- (workers/jobs/dmarc-ship.ts) has inserted the report into ClickHouse, which sets shipped_at and
-- drops them. A ClickHouse outage delays the listings, never loses a report.
--
-- Service role only, as panel_members (026): the listener, the shipper and the webhook fan-out
-- serve every instance and name instance_id in every statement. Row-level security with the
-- tenant_isolation policy all the same, the second wall should a later migration grant the table
-- to tenant code.
CREATE TABLE dmarc_reports (
  id                     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id            bigint NOT NULL REFERENCES instances(id),
  -- The domain the report was filed under: the one whose return-path host it came to. Reports go
  -- with their domain.
  domain_id              bigint NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
  org_name               text NOT NULL,
  org_email              text,
  report_id              text NOT NULL,
  begin_at               timestamptz NOT NULL,
  end_at                 timestamptz NOT NULL,
  schema                 text NOT NULL CHECK (schema IN ('rfc7489', 'rfc9990')),
  -- policy_published as read (engines/dmarc/report.ts PublishedPolicy), and the report's
  -- generator and errors: small, read whole.
  policy                 jsonb NOT NULL,
  generator              text,
  message_count          bigint NOT NULL CHECK (message_count >= 0),
  dmarc_pass_count       bigint NOT NULL CHECK (dmarc_pass_count >= 0),
  record_count           integer NOT NULL CHECK (record_count >= 0),
  reporter_authenticated boolean NOT NULL,
  received_at            timestamptz NOT NULL DEFAULT now(),
  -- The records (engines/dmarc/report.ts ReportRecord[]) until shipped; then null.
  records                jsonb,
  shipped_at             timestamptz,
  CHECK ((shipped_at IS NULL) = (records IS NOT NULL)),
  UNIQUE (instance_id, domain_id, org_name, report_id)
);
-- The shipper's claim: reports not yet in ClickHouse, oldest first.
CREATE INDEX dmarc_reports_unshipped_idx ON dmarc_reports (id) WHERE shipped_at IS NULL;

ALTER TABLE dmarc_reports ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON dmarc_reports USING (instance_id = cartero_current_instance());
