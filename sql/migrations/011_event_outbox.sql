-- The Postgres outbox was called mail_events, which is also the name of ClickHouse's event history
-- (a documented interface for data teams, so that one keeps its name). It is renamed to what it
-- is: the event outbox, where every event waits for the event pump (ClickHouse) and, later, for
-- webhooks. The rename keeps the rows, their ids, the grants of 009 and the row-level security
-- policy (all attached to the table, not to its name); what carries the old name by text is
-- renamed below: constraints, indexes, the identity sequence and the mail_logs trigger's function.
ALTER TABLE mail_events RENAME TO event_outbox;
ALTER SEQUENCE mail_events_id_seq RENAME TO event_outbox_id_seq;

-- Event kinds are declared once, in domain/outbox/kinds.ts (the list the TypeScript type derives
-- from; every writer passes a kind of that type). The database no longer enumerates them: a CHECK
-- had to be dropped and rewritten for each new kind (006 did so for 'status'), and a reference
-- table would be a second list to keep in step, plus a foreign-key lookup on every tracking hit.
-- The rule that a 'status' row carries its status stays: it names one kind, not all of them.
ALTER TABLE event_outbox DROP CONSTRAINT mail_events_kind_check;

-- mail_id stays NOT NULL. Every reader today (the event pump, the pending counts of GET
-- /v1/mails) joins an event to its mail, and ClickHouse's mail_events has no row without one.
-- Events not tied to a mail (restriction.*, form.*, consent.*, for webhooks) arrive with the
-- issue that adds them, which will relax this (a catalog-only change, no table rewrite) together
-- with the pump's claim, so no reader ever meets a row it cannot ship (docs/analytics.md).

-- Names that still say mail_events: the constraints (primary key, stage and status checks, and
-- on Postgres 18 the named NOT NULL constraints) and the indexes. Constraints first: renaming the
-- primary key renames its index too.
DO $$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT conname FROM pg_constraint
            WHERE conrelid = 'event_outbox'::regclass AND conname LIKE 'mail\_events\_%'
  LOOP
    EXECUTE format('ALTER TABLE event_outbox RENAME CONSTRAINT %I TO %I', r.conname, 'event_outbox_' || substr(r.conname, 13));
  END LOOP;
  FOR r IN SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            WHERE i.indrelid = 'event_outbox'::regclass AND c.relname LIKE 'mail\_events\_%'
  LOOP
    EXECUTE format('ALTER INDEX %I RENAME TO %I', r.relname, 'event_outbox_' || substr(r.relname, 13));
  END LOOP;
END
$$;

-- The trigger of 006/007 names the table in its body (plpgsql resolves it by name at run time).
CREATE OR REPLACE FUNCTION cartero_mail_logs_to_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO event_outbox (instance_id, mail_id, kind, status, occurred_at)
  SELECT instance_id, mail_id, 'status', status, created_at FROM logged WHERE moved ORDER BY id;
  RETURN NULL;
END
$$;

-- Kept by the rename; restated so a reader grepping the grants finds the table under its name
-- (009: the mail_logs trigger, complaints and unsubscribes insert; GET /v1/mails counts pending
-- opens and clicks).
GRANT SELECT, INSERT ON event_outbox TO cartero_tenant;

-- The event logs of unsubscribes and complaints copied their mail's address (recipient =
-- mails.to_email, which never changes). The copy kept nothing the mail row does not: the rows go
-- with their mail (ON DELETE CASCADE, so the retention purge removes them together) and their
-- listings join the mail anyway. Dropped; the listings read mails.to_email.
ALTER TABLE mail_unsubscribes DROP COLUMN recipient;
ALTER TABLE mail_complaints DROP COLUMN recipient;
