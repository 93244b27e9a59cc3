-- Every state move of a mail also enters the event outbox (kind 'status'), so ClickHouse gets the
-- delivery history and keeps its mirror of mail rows current (analytics: activity listings).
-- A statement trigger on mail_logs: every path that moves a mail writes its log row (acceptance,
-- domain/mail/transitions.ts, onhold, DSNs), so none can skip the outbox, and a batch of moves
-- costs one extra INSERT ... SELECT, not one per row.
ALTER TABLE mail_events DROP CONSTRAINT mail_events_kind_check;
ALTER TABLE mail_events ADD CONSTRAINT mail_events_kind_check
  CHECK (kind IN ('open', 'click', 'unsubscribe', 'complaint', 'status'));
ALTER TABLE mail_events ADD COLUMN status smallint CHECK (status BETWEEN 1 AND 7);
ALTER TABLE mail_events ADD CONSTRAINT mail_events_status_kind_check CHECK ((kind = 'status') = (status IS NOT NULL));

CREATE FUNCTION cartero_mail_logs_to_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO mail_events (instance_id, mail_id, kind, status, occurred_at)
  SELECT instance_id, mail_id, 'status', status, created_at FROM logged ORDER BY id;
  RETURN NULL;
END
$$;

CREATE TRIGGER mail_logs_to_outbox AFTER INSERT ON mail_logs
  REFERENCING NEW TABLE AS logged FOR EACH STATEMENT EXECUTE FUNCTION cartero_mail_logs_to_outbox();

-- Mails that existed before this migration get one status event each, so the mirror has them.
INSERT INTO mail_events (instance_id, mail_id, kind, status, occurred_at)
SELECT instance_id, mail_id, 'status', status, updated_at FROM mails ORDER BY id;
