-- Field catalog, datasets and their contacts (issue 14). domain/fields owns every statement on
-- fields; domain/datasets every statement on datasets and dataset_records.

-- The catalog: the typed fields contacts carry, per instance. field_key is reserved forever,
-- deleted fields included (a deleted field's data may still sit in records and lists under that
-- key, so a new field must never take it over): the unique index covers every row. The name is
-- unique among fields not deleted, ignoring case and accents, like template names (012's key).
CREATE TABLE fields (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id bigint NOT NULL REFERENCES instances(id),
  field_key   text NOT NULL CHECK (field_key ~ '^[a-z][a-z0-9_]{0,62}$'),
  name        text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  type        text NOT NULL CHECK (type IN ('text', 'email', 'phone', 'number', 'date', 'boolean', 'select')),
  -- select: the allowed values, in display order. NULL for every other type.
  options     text[] CHECK ((type = 'select') = (options IS NOT NULL)),
  -- Rules (domain/fields/rules.ts says which type takes which); NULL when not set.
  max_length  integer CHECK (max_length > 0),
  -- An ECMAScript pattern a value must match whole, checked against ReDoS when set (docs/datasets.md).
  pattern     text CHECK (char_length(pattern) <= 500),
  min         double precision,
  max         double precision,
  -- email and phone, created with the instance: datasets with one channel identify contacts by them.
  is_system   boolean NOT NULL DEFAULT false,
  is_active   boolean NOT NULL DEFAULT true,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  deleted_at  timestamptz,
  CHECK (NOT (is_system AND deleted_at IS NOT NULL)),
  CHECK (min IS NULL OR max IS NULL OR min <= max),
  UNIQUE (instance_id, id)
);

CREATE UNIQUE INDEX fields_key ON fields (instance_id, field_key);
CREATE UNIQUE INDEX fields_name_key ON fields (instance_id, cartero_name_key(name)) WHERE deleted_at IS NULL;

ALTER TABLE fields ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON fields USING (instance_id = cartero_current_instance());
-- Read (API, datasets, imports), create, deactivate, soft delete (CLI). Nothing deletes rows.
GRANT SELECT, INSERT, UPDATE ON fields TO cartero_tenant;

-- Every instance has the system fields from its first moment: a trigger, so every way an
-- instance is created (domain/tenancy/instances.ts, a restore, a test fixture) gets them, and
-- the instances that exist already get them below.
CREATE FUNCTION cartero_add_system_fields() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  INSERT INTO fields (instance_id, field_key, name, type, is_system)
  VALUES (NEW.id, 'email', 'Email', 'email', true), (NEW.id, 'phone', 'Phone', 'phone', true);
  RETURN NULL;
END
$$;

CREATE TRIGGER instances_system_fields AFTER INSERT ON instances
  FOR EACH ROW EXECUTE FUNCTION cartero_add_system_fields();

INSERT INTO fields (instance_id, field_key, name, type, is_system)
SELECT i.id, s.field_key, s.name, s.type, true
  FROM instances i
 CROSS JOIN (VALUES ('email', 'Email', 'email'), ('phone', 'Phone', 'phone')) AS s(field_key, name, type)
    ON CONFLICT DO NOTHING;

-- Datasets: named collections of contacts, configured in the panel. The identity field is stored
-- resolved (the channel's system field for one channel, the declared one otherwise), so reading
-- a contact's identifier never re-derives it. columns is the declaration in order,
-- [{"field_id": 7, "required": true}, ...]: one value written whole, so replacing a declaration
-- needs no DELETE (009: tenant code deletes nothing) and a read is one row.
CREATE TABLE datasets (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id       bigint NOT NULL REFERENCES instances(id),
  name              text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  description       text CHECK (char_length(description) <= 5000),
  -- NULL: no channel declared. Otherwise distinct values of mail, sms, wsp.
  channel           text[] CHECK (channel <@ ARRAY['mail', 'sms', 'wsp'] AND cardinality(channel) > 0),
  identity_field_id bigint NOT NULL,
  columns           jsonb NOT NULL CHECK (jsonb_typeof(columns) = 'array'),
  is_active         boolean NOT NULL DEFAULT true,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (instance_id, id),
  FOREIGN KEY (instance_id, identity_field_id) REFERENCES fields (instance_id, id)
);

CREATE UNIQUE INDEX datasets_name_key ON datasets (instance_id, cartero_name_key(name));

ALTER TABLE datasets ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON datasets USING (instance_id = cartero_current_instance());
-- Read (API), create, update, deactivate (CLI). Datasets are never deleted.
GRANT SELECT, INSERT, UPDATE ON datasets TO cartero_tenant;

-- A dataset's contacts, one row per identifier (the identity field's value, normalised: emails
-- lower-case, phones digits). values holds every column the contact carries, typed as its field
-- says (numbers as JSON numbers, booleans as booleans), keyed by field_key.
--
-- How searches find rows (docs/datasets.md, "Storage"): the unique btree answers an exact
-- identifier and, being in the C collation (byte order), an identifier prefix as a range; the GIN
-- index answers column=value as containment (values @> '{"city": "Madrid"}'), one index for every
-- column of every dataset. jsonb_path_ops: smaller and faster than the default operator class,
-- and containment is the only operator used.
--
-- No foreign key to datasets: a bulk import inserts up to millions of rows in one statement and
-- the per-row referential check would be one more index probe per row (measured in
-- docs/performance.md); every writer reads the dataset under row-level security in the same
-- transaction first, and datasets are never deleted.
CREATE TABLE dataset_records (
  id          bigint GENERATED ALWAYS AS IDENTITY,
  instance_id bigint NOT NULL,
  dataset_id  bigint NOT NULL,
  identifier  text COLLATE "C" NOT NULL CHECK (identifier <> ''),
  values      jsonb NOT NULL CHECK (jsonb_typeof(values) = 'object'),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  -- The listing's order (oldest first) within a dataset.
  PRIMARY KEY (dataset_id, id),
  UNIQUE (dataset_id, identifier)
);

CREATE INDEX dataset_records_values ON dataset_records USING gin (values jsonb_path_ops);

ALTER TABLE dataset_records ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON dataset_records USING (instance_id = cartero_current_instance());
-- Upserts by API and import (INSERT ... ON CONFLICT DO UPDATE), reads and searches.
GRANT SELECT, INSERT, UPDATE ON dataset_records TO cartero_tenant;

-- The merge of an import: the rows of one identifier in file order, each overriding the
-- columns it carries (jsonb || is jsonb_concat).
CREATE AGGREGATE cartero_jsonb_merge(jsonb) (SFUNC = jsonb_concat, STYPE = jsonb, INITCOND = '{}');
