-- Fair order of webhook delivery jobs across instances (domain/webhooks/fair-share.ts): each
-- delivery the fan-out writes gets a tag, its place in start-time fair queuing (each instance's
-- deliveries numbered on from max(the oldest pending tag, where the instance's last one ended)),
-- and its job's priority follows the tag. The pending tags' index gives the queue's virtual time
-- (its oldest pending tag) in one probe; webhook_fair_clock keeps where each instance's last tag
-- ended. Deliveries written before this migration have no tag and count as "now".
ALTER TABLE webhook_deliveries ADD COLUMN fair_tag bigint;
CREATE INDEX webhook_deliveries_fair_tag_idx ON webhook_deliveries (fair_tag) WHERE status = 'pending' AND fair_tag IS NOT NULL;
CREATE TABLE webhook_fair_clock (
  instance_id bigint PRIMARY KEY REFERENCES instances (id),
  next_tag bigint NOT NULL
);
