-- A commit that arrives after its web request gave up fails instead of applying (issue 26's fault
-- suite saw it: Postgres stopped right after a send's last INSERT was answered, the request's
-- COMMIT waited in the socket, the request answered 503 after DATABASE_QUERY_TIMEOUT_MS and
-- dropped its connection, and once Postgres resumed it read the COMMIT and applied it: a mail
-- sent behind a 503).
--
-- A web dyno's pool has a client-side bound per statement (sql/pool.ts); withTransaction then
-- sets cartero.commit_within_ms for the transaction, a little under that bound. The COMMIT's
-- wait starts after the transaction began (now()), so a request that stopped waiting for its
-- COMMIT has a transaction older than the bound by the time the COMMIT is read: these deferred
-- triggers, which run inside the COMMIT, see clock_timestamp() past now() + commit_within_ms and
-- fail it, and nothing is applied. Transactions without the setting (workers, the CLI, release)
-- are not bounded.
--
-- On messages (one row per accepted send, every mail's parent: API sends, form auto-replies and
-- consent confirmations all go through domain/mail/accept.ts) and form_submissions: the requests
-- whose 503 must leave nothing behind, at one deferred event per request.
CREATE FUNCTION commit_deadline_check() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  within text := current_setting('cartero.commit_within_ms', true);
BEGIN
  IF within IS NOT NULL AND within <> '' AND clock_timestamp() > now() + within::int * interval '1 millisecond' THEN
    RAISE EXCEPTION 'commit arrived % ms after the transaction began, past its % ms: the request stopped waiting for it',
      round(extract(epoch FROM clock_timestamp() - now()) * 1000), within
      USING ERRCODE = 'CR503';
  END IF;
  RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER messages_commit_deadline AFTER INSERT ON messages
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION commit_deadline_check();
CREATE CONSTRAINT TRIGGER form_submissions_commit_deadline AFTER INSERT ON form_submissions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION commit_deadline_check();
