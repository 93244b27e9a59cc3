-- The send queue carries batches, not mails (issue 42, docs/sending.md "The send queue"). A send
-- job names up to 100 mails of one instance ({instance_id, mail_ids}); what each mail's next try
-- is lives in its row: its status, its tries (attempts) and, for a deferred mail, when it is
-- tried again (next_attempt_at, set with the move to deferred and cleared by every other move;
-- the worker's claim does not try a mail before it: domain/mail/gates.ts).
ALTER TABLE mails ADD COLUMN next_attempt_at timestamptz;

-- The jobs the code before this queued, one per mail ({instance_id, mail_id}), become batch jobs:
-- those waiting to start (created) and those waiting for their retry (retry, a deferred mail's
-- backoff), grouped by instance and start time (now for any job free to start), 100 mails a job,
-- in mail order, with their start time and the
-- queue's policy columns kept; a deferred mail's next_attempt_at is its old job's start. Active
-- jobs (an old worker has them in hand during a rolling upgrade) are left as they are: the new
-- worker takes the one-mail shape too when such a job expires and is retried, and the mails'
-- rows keep a mail from being sent twice whichever job names it. On a database without pg-boss
-- yet (a new one: release installs pg-boss after these migrations) there is nothing to move.
DO $$
BEGIN
  IF to_regclass('pgboss.job') IS NULL THEN
    RETURN;
  END IF;
  CREATE TEMPORARY TABLE old_send_jobs ON COMMIT DROP AS
    WITH moved AS (
      DELETE FROM pgboss.job
       WHERE name = 'mail.send' AND state IN ('created', 'retry') AND data ? 'mail_id' AND NOT data ? 'mail_ids'
      RETURNING data, state, priority, start_after, retry_limit, retry_delay, retry_backoff, expire_in, keep_until, dead_letter, policy
    )
    -- A job free to start already starts now, whenever it was written: such jobs share batches.
    SELECT (data->>'instance_id')::bigint AS instance_id, data->>'mail_id' AS mail_id, state, priority,
           greatest(start_after, now()) AS start_after,
           retry_limit, retry_delay, retry_backoff, expire_in, keep_until, dead_letter, policy
      FROM moved;

  UPDATE mails m SET next_attempt_at = o.start_after
    FROM old_send_jobs o
   WHERE o.state = 'retry' AND m.instance_id = o.instance_id AND m.mail_id = o.mail_id;

  INSERT INTO pgboss.job (name, data, priority, start_after, retry_limit, retry_delay, retry_backoff, expire_in, keep_until, dead_letter, policy)
  SELECT 'mail.send',
         jsonb_build_object('instance_id', instance_id, 'mail_ids', jsonb_agg(mail_id ORDER BY mail_id)),
         max(priority), start_after, max(retry_limit), max(retry_delay), bool_or(retry_backoff), max(expire_in), max(keep_until),
         max(dead_letter), max(policy)
    FROM (SELECT o.*, (row_number() OVER (PARTITION BY instance_id, start_after ORDER BY mail_id) - 1) / 100 AS chunk
            FROM old_send_jobs o) c
   GROUP BY instance_id, start_after, chunk;
END
$$;
