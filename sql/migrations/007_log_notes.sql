-- A mail_logs row either records a move of the mail (its status changed) or a note at the
-- current status: a delayed DSN ('dsn_delayed'), a mail given a new send job
-- ('requeued_without_job'). Only moves are delivery history: the outbox trigger of 006 turned
-- every row into a 'status' event, so a delayed DSN sent ClickHouse a second "sent" for a mail
-- that never moved. The writers of notes say so; every other writer keeps the default.
ALTER TABLE mail_logs ADD COLUMN moved boolean NOT NULL DEFAULT true;

CREATE OR REPLACE FUNCTION cartero_mail_logs_to_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO mail_events (instance_id, mail_id, kind, status, occurred_at)
  SELECT instance_id, mail_id, 'status', status, created_at FROM logged WHERE moved ORDER BY id;
  RETURN NULL;
END
$$;
