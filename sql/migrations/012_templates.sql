-- Mail templates (issue 13): the design document (config) a template is made from, the HTML and
-- plain text generated from it, and the findings of its last check. domain/templates/templates.ts
-- owns every statement on this table.

-- Template names are unique per instance ignoring case and accents ("Promoción" = "PROMOCION").
-- Postgres decides it, so two creates racing each other cannot both win: the unique index below
-- is on this key. unaccent is a trusted contrib extension (PostgreSQL 13+), installable by the
-- database owner. unaccent() itself is only STABLE (its dictionary could be changed), so the key
-- names the dictionary explicitly and is declared IMMUTABLE, as an index expression must be; the
-- dictionary is never changed by Cartero.
CREATE EXTENSION IF NOT EXISTS unaccent;

CREATE FUNCTION cartero_name_key(name text) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT lower(public.unaccent('public.unaccent'::regdictionary, name)) $$;

CREATE TABLE mail_templates (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id bigint NOT NULL REFERENCES instances(id),
  -- Lengths in characters (code points), as the API's schemas count them.
  name        text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  subject     text CHECK (char_length(subject) <= 254),
  preheader   text CHECK (char_length(preheader) <= 255),
  description text CHECK (char_length(description) <= 5000),
  -- public: sendable outside test_mode. Moved only by the panel (the CLI).
  status      text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'public')),
  -- native: made from a design document, editable while a draft. external: HTML imported from an
  -- editor no longer offered, never editable (409 template_read_only).
  provider    text NOT NULL DEFAULT 'native' CHECK (provider IN ('native', 'external')),
  -- json, not jsonb: the document is kept as the text it is written with (the request's value as
  -- compact JSON; jsonb would reorder members), so a read returns the value that was sent.
  config      json,
  html        text,
  -- The plain-text alternative sent with html; NULL for external templates (the worker derives one).
  text_body   text,
  -- Warnings and suggestions of the last check of the stored document (never errors).
  findings    jsonb NOT NULL DEFAULT '[]',
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  -- Deletion (panel only) is soft: sends already accepted keep their own copy of the content,
  -- and the name becomes free again.
  deleted_at  timestamptz,
  CHECK (provider = 'native' OR config IS NULL),
  UNIQUE (instance_id, id)
);

CREATE UNIQUE INDEX mail_templates_name_key ON mail_templates (instance_id, cartero_name_key(name)) WHERE deleted_at IS NULL;

ALTER TABLE mail_templates ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mail_templates USING (instance_id = cartero_current_instance());

-- Tenant code reads (API, send acceptance), creates (API, CLI import) and updates (PATCH,
-- publish, unpublish, soft delete). Nothing deletes rows (009's rule).
GRANT SELECT, INSERT, UPDATE ON mail_templates TO cartero_tenant;
