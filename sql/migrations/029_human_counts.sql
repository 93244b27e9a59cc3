-- Each mail's human opens and clicks beside its raw ones (issue 32, docs/tracking.md): the events
-- the event pump counted that no machine rule flagged (domain/tracking/machine.ts), so the Mail
-- rows of GET /v1/mails, GET /v1/mails/{id} and the sent listing (through ClickHouse's mirror)
-- say human_opens / human_clicks, equal to what the opens and clicks listings count with
-- exclude_machine=true. A click found later to open a burst is taken off again (reflag).
--
-- Mails counted before this column existed: 0 where they had no open (or click) at all, which is
-- exact; NULL ("not known") where they had some, because the events the pump judged have mostly
-- left the outbox since (ClickHouse keeps them, flagged: exclude_machine=true still counts them).
-- The pump's additions keep a NULL NULL, rather than a number that would look exact and be low.
ALTER TABLE mails ADD COLUMN human_opens integer, ADD COLUMN human_clicks integer;
ALTER TABLE mails ALTER COLUMN human_opens SET DEFAULT 0, ALTER COLUMN human_clicks SET DEFAULT 0;
-- Rows opened and clicked both keep the NULLs the ADD gave them: not rewritten.
UPDATE mails SET human_opens = CASE WHEN opens = 0 THEN 0 END, human_clicks = CASE WHEN clicks = 0 THEN 0 END
 WHERE opens = 0 OR clicks = 0;
-- No CHECK (human_opens <= opens): a row that failed it would stop the event pump's whole batch,
-- every tick. test/event-pump.test.ts and test/tracking.test.ts hold the pump to the counts, and
-- test/human-counts-migration.test.ts this upgrade.
