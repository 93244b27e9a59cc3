-- The mails each live send worker has handed to SMTP and not yet settled (workers/send-lease.ts).
-- pg-boss retries a send job once it has been active for SEND_JOB_EXPIRE_SECONDS, whether its
-- first run died or is still waiting on a slow relay; a retry that finds its mail queued and
-- listed here by a worker whose lease is live leaves it alone instead of sending it again. A
-- worker that dies stops refreshing its row, and after expires_at its mails are fair game.
-- Service data, not tenant data: worker ids and mail ids only.
CREATE TABLE send_leases (
  worker_id  text PRIMARY KEY,
  mail_ids   text[] NOT NULL DEFAULT '{}',
  expires_at timestamptz NOT NULL
);
