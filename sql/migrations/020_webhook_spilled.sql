-- Deliveries a worker's drain let go past WEBHOOK_HOLD_MAX (workers/jobs/webhook-drain.ts): their jobs
-- are done and they are not in any worker's memory, so the mark is what brings them back. A drain
-- takes them, oldest first, as its held deliveries run low, and a drain that starts looks for
-- them first. Usually none: the partial index stays empty.
ALTER TABLE webhook_deliveries ADD COLUMN spilled boolean NOT NULL DEFAULT false;
CREATE INDEX webhook_deliveries_spilled_idx ON webhook_deliveries (webhook_id, id) WHERE spilled;
