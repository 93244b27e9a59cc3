-- The webhook stage takes the outbox's unmarked rows per instance, in turns (domain/webhooks/fanout.ts:
-- one instance's backlog must not hold back another's events), not in one global id order: it
-- walks the instances that have unmarked rows (a loose index scan) and reads each one's oldest.
-- The index on id alone served only the global order.
CREATE INDEX event_outbox_webhooks_pending_instance_idx ON event_outbox (instance_id, id) WHERE NOT webhooks_done;
DROP INDEX event_outbox_webhooks_pending_idx;
