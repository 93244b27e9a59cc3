-- Forms (issue 15): definitions (panel-only: the CLI), their ordered items, and the submissions
-- they receive, by API (source form_api) or on the hosted page (source form). domain/forms owns
-- every statement on these tables; docs/forms.md describes the choices.

-- A form. A deleted form keeps its row (its submissions and the consent events they produced
-- name it); its name is free again. auto_reply_* is either a subject with html and/or text (merge
-- tags of the form's answers) or a template id. public_token names the hosted page.
-- auto_reply_sender_id is checked against the instance's senders by domain/forms (senders have no
-- (instance_id, id) key to reference).
CREATE TABLE forms (
  id                     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id            bigint NOT NULL REFERENCES instances(id),
  name                   text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  kind                   text NOT NULL CHECK (kind IN ('consent', 'advanced')),
  type                   text NOT NULL CHECK (type IN ('registration', 'update')),
  dataset_id             bigint,
  requires_confirmation  boolean NOT NULL DEFAULT false,
  auto_reply_sender_id   bigint,
  auto_reply_subject     text CHECK (char_length(auto_reply_subject) <= 254),
  auto_reply_html        text,
  auto_reply_text        text,
  auto_reply_template_id bigint,
  team_notice_emails     text[] NOT NULL DEFAULT '{}' CHECK (cardinality(team_notice_emails) <= 20),
  settings               jsonb CHECK (settings IS NULL OR jsonb_typeof(settings) = 'object'),
  is_default             boolean NOT NULL DEFAULT false,
  is_active              boolean NOT NULL DEFAULT true,
  public_token           text NOT NULL UNIQUE CHECK (public_token ~ '^[A-Za-z0-9_-]{16,64}$'),
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  deleted_at             timestamptz,
  FOREIGN KEY (instance_id, dataset_id) REFERENCES datasets (instance_id, id),
  CHECK (auto_reply_template_id IS NULL OR (auto_reply_html IS NULL AND auto_reply_text IS NULL)),
  CHECK (deleted_at IS NULL OR NOT is_active),
  UNIQUE (instance_id, id)
);
-- Unique ignoring case and accents (cartero_name_key: 012); a deleted form's name is free.
CREATE UNIQUE INDEX forms_name_key ON forms (instance_id, cartero_name_key(name)) WHERE deleted_at IS NULL;
-- At most one default form per instance.
CREATE UNIQUE INDEX forms_one_default ON forms (instance_id) WHERE is_default AND deleted_at IS NULL;
-- The dataset rule (a dataset change must not leave a connected form short) reads forms by dataset.
CREATE INDEX forms_dataset_idx ON forms (instance_id, dataset_id) WHERE dataset_id IS NOT NULL AND deleted_at IS NULL;

-- A form's items in display order. An update keeps the id of every item it names by id (so an
-- integrator's stored item ids stay valid), adds new ones and marks the others removed
-- (removed_at): nothing is deleted, and old submissions still name items that exist.
CREATE TABLE form_items (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id bigint NOT NULL,
  form_id     bigint NOT NULL,
  position    integer NOT NULL CHECK (position >= 0),
  type        text NOT NULL CHECK (type IN ('field', 'consent', 'separator', 'text')),
  field_id    bigint,
  term_id     bigint,
  channel     text CHECK (channel IN ('mail', 'sms', 'wsp')),
  label       text CHECK (char_length(label) BETWEEN 1 AND 1000),
  text        text CHECK (char_length(text) BETWEEN 1 AND 10000),
  required    boolean NOT NULL DEFAULT false,
  removed_at  timestamptz,
  FOREIGN KEY (instance_id, form_id) REFERENCES forms (instance_id, id),
  FOREIGN KEY (instance_id, field_id) REFERENCES fields (instance_id, id),
  FOREIGN KEY (instance_id, term_id) REFERENCES consent_terms (instance_id, id),
  CHECK ((type = 'field') = (field_id IS NOT NULL)),
  CHECK ((type = 'consent') = (term_id IS NOT NULL AND channel IS NOT NULL)),
  CHECK ((type = 'text') = (text IS NOT NULL)),
  CHECK (type IN ('field', 'consent') OR NOT required),
  UNIQUE (instance_id, id)
);
CREATE INDEX form_items_form_idx ON form_items (form_id, position) WHERE removed_at IS NULL;

-- Submissions. answers: the validated answers by item id ({"12": "ann@x.test", "14": true});
-- field_values: the fields' stored values by field_key, what the dataset is fed and the mails'
-- merge tags read. ip_address and user_agent are what the caller declared (form_api) or the
-- hosted page's request (form). request_hash: SHA-256 of the submission's canonical form (items
-- only, not ip_address or user_agent), what tells a retry from a different submission under the
-- same Idempotency-Key. The unique constraint on (form_id, idempotency_key) is what makes
-- concurrent duplicates race-free: the second insert waits for the first and inserts nothing.
-- answered_status: the status of the first answer, replayed as it was by a retry.
CREATE TABLE form_submissions (
  id                      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id             bigint NOT NULL,
  form_id                 bigint NOT NULL,
  source                  text NOT NULL CHECK (source IN ('form', 'form_api')),
  status                  text NOT NULL CHECK (status IN ('pending', 'confirmed')),
  answered_status         text NOT NULL CHECK (answered_status IN ('pending', 'confirmed')),
  answers                 jsonb NOT NULL CHECK (jsonb_typeof(answers) = 'object'),
  field_values            jsonb NOT NULL CHECK (jsonb_typeof(field_values) = 'object'),
  idempotency_key         text CHECK (char_length(idempotency_key) BETWEEN 1 AND 255),
  request_hash            text NOT NULL CHECK (request_hash ~ '^[0-9a-f]{64}$'),
  ip_address              inet,
  user_agent              text CHECK (char_length(user_agent) <= 1024),
  confirmed_at            timestamptz,
  confirmation_ip         inet,
  confirmation_user_agent text CHECK (char_length(confirmation_user_agent) <= 1024),
  created_at              timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (instance_id, form_id) REFERENCES forms (instance_id, id),
  CONSTRAINT form_submissions_idempotency_key UNIQUE (form_id, idempotency_key),
  CHECK (status = 'confirmed' OR confirmed_at IS NULL),
  UNIQUE (instance_id, id)
);
CREATE INDEX form_submissions_form_idx ON form_submissions (instance_id, form_id, id DESC);

-- Consent events a submission produced name it (013 made the columns); the key makes the link
-- real. NOT VALID: no existing event has a submission (forms arrive here), and new rows are checked.
ALTER TABLE consent_events ADD CONSTRAINT consent_events_submission_fkey
  FOREIGN KEY (instance_id, submission_id) REFERENCES form_submissions (instance_id, id) NOT VALID;
CREATE INDEX consent_events_submission_idx ON consent_events (instance_id, submission_id) WHERE submission_id IS NOT NULL;

ALTER TABLE forms ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON forms USING (instance_id = cartero_current_instance());
ALTER TABLE form_items ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON form_items USING (instance_id = cartero_current_instance());
ALTER TABLE form_submissions ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON form_submissions USING (instance_id = cartero_current_instance());

-- Grants (009's rule: exactly what tenant code uses; nothing deletes).
GRANT SELECT, INSERT, UPDATE ON forms TO cartero_tenant;                                        -- CLI create/update/activate/delete (deleted_at)
GRANT SELECT, INSERT, UPDATE ON form_items TO cartero_tenant;                                   -- with their form; removed_at, required (align)
GRANT SELECT, INSERT ON form_submissions TO cartero_tenant;                                     -- submissions
GRANT UPDATE (status, confirmed_at, confirmation_ip, confirmation_user_agent)                   -- the confirmation link
  ON form_submissions TO cartero_tenant;
GRANT UPDATE (form_name) ON consent_events TO cartero_tenant;                                   -- a renamed form's events show its current name
