-- The panel's CSV imports and list uploads (issue 31, docs/panel.md): each run's progress and its
-- rejects file, in Postgres so that any web dyno answers the page's polls and the download, not
-- only the one whose request runs the import (api/routes/panel-imports.ts). A finished run is
-- kept an hour; a run whose dyno died mid-import stops being refreshed and reads as interrupted.

CREATE TABLE panel_imports (
  instance_id bigint NOT NULL REFERENCES instances(id),
  key         text NOT NULL CHECK (key ~ '^[A-Za-z0-9_-]{1,64}$'),  -- the page's choice, or generated
  kind        text NOT NULL CHECK (kind IN ('dataset_import', 'list_upload')),
  target_id   bigint NOT NULL,                 -- the dataset or list
  status      text NOT NULL CHECK (status IN ('reading', 'merging', 'done', 'failed')),
  bytes_read  bigint NOT NULL DEFAULT 0,
  bytes_total bigint,                          -- the request's Content-Length, when it had one
  rejected    bigint NOT NULL DEFAULT 0,
  summary     jsonb,                           -- the POST's answer, once done
  error       jsonb,                           -- {code, detail}, once failed
  started_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),  -- refreshed while the run lives (progress or a heartbeat)
  finished_at timestamptz,
  PRIMARY KEY (instance_id, key)
);
CREATE INDEX panel_imports_finished_idx ON panel_imports (instance_id, updated_at);

-- The rejects file in pieces of up to a MiB, written as the import refuses rows (on their own
-- connection, outside the import's transaction) and read back in order for the download.
CREATE TABLE panel_import_rejects (
  instance_id bigint NOT NULL,
  key         text NOT NULL,
  seq         integer NOT NULL,
  chunk       bytea NOT NULL,
  PRIMARY KEY (instance_id, key, seq),
  FOREIGN KEY (instance_id, key) REFERENCES panel_imports ON DELETE CASCADE
);

ALTER TABLE panel_imports ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON panel_imports USING (instance_id = cartero_current_instance());
ALTER TABLE panel_import_rejects ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON panel_import_rejects USING (instance_id = cartero_current_instance());
-- The tenant writes and reads its runs; deletions (an hour's retention, a key run again, the
-- rejects of a failed run) run as the service role, naming the instance (009: no DELETE granted).
GRANT SELECT, INSERT, UPDATE ON panel_imports TO cartero_tenant;
GRANT SELECT, INSERT ON panel_import_rejects TO cartero_tenant;
