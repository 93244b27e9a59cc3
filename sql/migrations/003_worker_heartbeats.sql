-- Written by the worker's heartbeat job (a pg-boss job, so a row here proves a worker is
-- consuming the shared queue); read by /readyz. Not tenant data.
CREATE TABLE worker_heartbeats (
  worker_id  text PRIMARY KEY,
  hostname   text NOT NULL,
  pid        integer NOT NULL,
  seen_at    timestamptz NOT NULL DEFAULT now()
);
