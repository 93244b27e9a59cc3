-- Which send run has a queued mail at SMTP, and whether that run's worker still lives.
--
-- pg-boss retries a send job once it has been active for SEND_JOB_EXPIRE_SECONDS, whether its
-- first run died or is still waiting on a slow relay. Transaction A, which moves a mail to queued,
-- now also records the worker that will send it (held_by, held_since); every worker keeps a row
-- in send_leases whose expires_at a timer pushes forward while the process lives
-- (workers/machinery/send-lease.ts). A retry that finds its mail queued, held by a worker with a live
-- lease, and held for less than the hold bound leaves it unsent (workers/jobs/send-mail/claim.ts).
CREATE TABLE send_leases (
  worker_id  text PRIMARY KEY,
  expires_at timestamptz NOT NULL
);
-- Read by transaction A as the tenant role; written only by the service role (the workers).
GRANT SELECT ON send_leases TO cartero_tenant;
REVOKE INSERT, UPDATE, DELETE ON send_leases FROM cartero_tenant;

ALTER TABLE mails ADD COLUMN held_by text, ADD COLUMN held_since timestamptz;
