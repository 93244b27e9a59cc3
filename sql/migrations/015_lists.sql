-- CSV lists (issue 14): named lists of rows uploaded as CSV files, each column a catalog field
-- at a CSV position. domain/lists owns every statement on these tables.

-- columns: [{"field_id": 7, "position": 1}, ...], declared at creation (the spec's list_* codes
-- are checked by domain/lists/lists.ts). A deleted list's name is free again.
CREATE TABLE lists (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id bigint NOT NULL REFERENCES instances(id),
  name        text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  columns     jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(columns) = 'array'),
  max_rows    integer NOT NULL CHECK (max_rows > 0),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  deleted_at  timestamptz,
  UNIQUE (instance_id, id)
);

CREATE UNIQUE INDEX lists_name_key ON lists (instance_id, cartero_name_key(name)) WHERE deleted_at IS NULL;

-- Each file put into a list. A live upload (replaced_at NULL) is part of the list; an overwrite
-- or the list's deletion retires the ones before it. The content hash is unique among a list's
-- live uploads: an append of a file the list already has is refused (list_import_duplicated),
-- and while an identical file is still importing, its uncommitted row makes the second insert
-- wait, which the upload turns into the same refusal (lock_timeout).
CREATE TABLE list_uploads (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id    bigint NOT NULL,
  list_id        bigint NOT NULL,
  content_sha256 bytea NOT NULL CHECK (octet_length(content_sha256) = 32),
  file_name      text,
  mode           text NOT NULL CHECK (mode IN ('append', 'overwrite')),
  -- Data rows stored from the file, and rows refused (invalid values).
  rows           integer NOT NULL DEFAULT 0,
  rejected       integer NOT NULL DEFAULT 0,
  created_at     timestamptz NOT NULL DEFAULT now(),
  replaced_at    timestamptz,
  FOREIGN KEY (instance_id, list_id) REFERENCES lists (instance_id, id),
  UNIQUE (instance_id, id)
);

CREATE UNIQUE INDEX list_uploads_content ON list_uploads (list_id, content_sha256) WHERE replaced_at IS NULL;

-- The rows, by upload: a retired upload's rows are deleted by the service role afterwards
-- (domain/lists/purge.ts), since tenant code deletes nothing (009). No foreign key, for the
-- reason dataset_records has none (014): COPY of a large file, one referential probe per row.
CREATE TABLE list_rows (
  instance_id bigint NOT NULL,
  list_id     bigint NOT NULL,
  upload_id   bigint NOT NULL,
  row         integer NOT NULL,
  values      jsonb NOT NULL CHECK (jsonb_typeof(values) = 'object')
);

CREATE INDEX list_rows_upload ON list_rows (upload_id);

ALTER TABLE lists ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON lists USING (instance_id = cartero_current_instance());
ALTER TABLE list_uploads ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON list_uploads USING (instance_id = cartero_current_instance());
ALTER TABLE list_rows ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON list_rows USING (instance_id = cartero_current_instance());

-- Create, soft delete (lists); record and retire uploads; COPY rows in. Nothing deletes (009).
GRANT SELECT, INSERT, UPDATE ON lists TO cartero_tenant;
GRANT SELECT, INSERT, UPDATE ON list_uploads TO cartero_tenant;
GRANT SELECT, INSERT ON list_rows TO cartero_tenant;
