-- Deliverability alerts (issue 40, docs/deliverability.md "Alerts"): the webhook events
-- deliverability.threshold_crossed and deliverability.threshold_recovered, one row per event
-- emitted. The rows are both the alerts' state and the events' entities: the worker job
-- (workers/jobs/deliverability-alerts.ts) reads the newest row of a series (instance, local day,
-- provider, sending domain, metric) as the status last told to the receivers, and the webhook
-- fan-out reads the event's data from the row its outbox entity_id names.
--
-- Emitted at most once, whatever the number of workers or their restarts: a row is claimed with
-- INSERT ... ON CONFLICT DO NOTHING on two unique keys, and its outbox event is appended in the
-- same transaction only when the row was inserted.
--  - (series, seq): seq is the number of rows the series had when the evaluation read it; two
--    evaluations that read the same state claim the same seq, and only one inserts.
--  - (series, status) of a crossing: a status is crossed once per day (the issue's rule), even
--    after a recovery in between.
--
-- Service role only, as dmarc_reports (031): the job and the fan-out serve every instance and
-- name instance_id in every statement. Row-level security all the same, the second wall.
CREATE TABLE deliverability_alerts (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id bigint NOT NULL REFERENCES instances(id),
  -- The local date in the instance's zone (instances.tz, else UTC) the figures are of.
  day         date NOT NULL,
  provider    text NOT NULL,
  -- The sending domain: the part of the sender's address after its @, lower case.
  domain      text NOT NULL,
  metric      text NOT NULL CHECK (metric IN ('complaint_rate', 'bounce_rate')),
  seq         integer NOT NULL CHECK (seq >= 0),
  kind        text NOT NULL CHECK (kind IN ('crossed', 'recovered')),
  -- The status reached: crossed to warning or critical, recovered to warning or ok.
  status      text NOT NULL CHECK (status IN ('ok', 'warning', 'critical')),
  rate        double precision NOT NULL,
  -- Crossed: the threshold reached; recovered: the one the rate fell back below.
  threshold   double precision NOT NULL,
  delivered   bigint NOT NULL CHECK (delivered >= 0),
  -- The rate's divisor: delivered for complaint_rate, delivered + bounced for bounce_rate.
  volume      bigint NOT NULL CHECK (volume >= 0),
  -- Complaints (complaint_rate) or hard bounces (bounce_rate).
  count       bigint NOT NULL CHECK (count >= 0),
  created_at  timestamptz NOT NULL DEFAULT now(),
  -- Nobody crosses up to ok, nor recovers to critical.
  CHECK (kind = 'recovered' OR status <> 'ok'),
  CHECK (kind = 'crossed' OR status <> 'critical'),
  UNIQUE (instance_id, day, provider, domain, metric, seq)
);
CREATE UNIQUE INDEX deliverability_alerts_crossed_once_idx
  ON deliverability_alerts (instance_id, day, provider, domain, metric, status) WHERE kind = 'crossed';
-- The retention purge's range.
CREATE INDEX deliverability_alerts_created_idx ON deliverability_alerts (created_at);

ALTER TABLE deliverability_alerts ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON deliverability_alerts USING (instance_id = cartero_current_instance());
