-- Fair order of webhook delivery jobs across instances (domain/webhooks/fair-share.ts): each
-- delivery the fan-out writes gets a tag, its place in start-time fair queuing (each instance's
-- deliveries numbered on from max(the next queued job's tag, where the instance's last one ended)),
-- and its job's priority follows the tag (the queue's virtual time is read from the jobs'
-- priorities); webhook_fair_clock keeps where each instance's last tag ended. Deliveries written
-- before this migration have no tag and count as "now".
ALTER TABLE webhook_deliveries ADD COLUMN fair_tag bigint;
CREATE TABLE webhook_fair_clock (
  instance_id bigint PRIMARY KEY REFERENCES instances (id),
  next_tag bigint NOT NULL
);
