-- Consent (issue 14): purposes, terms and their versions, consent events with the rules each
-- declared, and the purposes a send declares. domain/consent/ owns every statement on these
-- tables; docs/consent.md describes them for readers of the proof export.
--
-- What the database itself guarantees here (not only the code): at most one current version per
-- term; a term's purposes never change; a published version's text never changes (the proof
-- export quotes it, with its SHA-256 computed here); a rule's purpose exists in the instance; one
-- rule per channel and purpose in an event; email contacts are stored lowercased; an event's
-- version belongs to its term; the status columns agree with each other.

-- Purposes: what a consent is for ("newsletter", "profiling"). Created in the panel, never
-- edited or deleted (a term and the rules of past events name them).
CREATE TABLE consent_purposes (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id bigint NOT NULL REFERENCES instances(id),
  name        text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (instance_id, id)
);
-- Unique ignoring case and accents, as template names (cartero_name_key: 012).
CREATE UNIQUE INDEX consent_purposes_name_key ON consent_purposes (instance_id, cartero_name_key(name));

-- Terms: a legal text (in versions) that a person accepts for some purposes on some channels.
-- purpose_ids is an array, not a join table: it is fixed at creation (trigger below), read whole
-- with the term, and the resolver never joins through it. Its elements are checked against
-- consent_purposes by domain/consent/terms.ts in the creating transaction (purposes are never
-- deleted, so they cannot dangle later).
CREATE TABLE consent_terms (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id bigint NOT NULL REFERENCES instances(id),
  name        text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  type        text NOT NULL CHECK (type IN ('data_processing', 'service_terms', 'marketing', 'subscription', 'other')),
  purpose_ids bigint[] NOT NULL CHECK (cardinality(purpose_ids) >= 1 AND array_position(purpose_ids, NULL) IS NULL),
  channels    text[] NOT NULL
              CHECK (cardinality(channels) >= 1 AND channels <@ ARRAY['mail', 'sms', 'wsp', 'call', 'push']
                     AND array_position(channels, NULL) IS NULL),
  is_active   boolean NOT NULL DEFAULT true,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (instance_id, id)
);
CREATE UNIQUE INDEX consent_terms_name_key ON consent_terms (instance_id, cartero_name_key(name));

-- "Purposes cannot be edited after the term is created" (spec): refused here for every role,
-- the service role included, not only by the absence of an update path.
CREATE FUNCTION cartero_consent_term_frozen() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.purpose_ids IS DISTINCT FROM OLD.purpose_ids OR NEW.instance_id IS DISTINCT FROM OLD.instance_id THEN
    RAISE EXCEPTION 'the purposes of consent term % cannot change after it is created', OLD.id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'consent_terms_purposes_frozen';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER consent_terms_frozen BEFORE UPDATE ON consent_terms
  FOR EACH ROW EXECUTE FUNCTION cartero_consent_term_frozen();

-- Versions of a term's text. Publishing a version (insert) does not make it current; at most one
-- version per term is current, and that is the unique index below, not a check in code: two
-- concurrent "set current" calls cannot both win. body_sha256 is computed by the trigger from the
-- stored text (UTF-8), so the text and its fingerprint cannot disagree; the published text, its
-- label, URL and time never change afterwards (an event freezes its version and the proof export
-- quotes it).
CREATE TABLE consent_term_versions (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id  bigint NOT NULL,
  term_id      bigint NOT NULL,
  version      text NOT NULL CHECK (char_length(version) BETWEEN 1 AND 64),
  body         text NOT NULL CHECK (char_length(body) >= 1),
  body_sha256  text NOT NULL CHECK (body_sha256 ~ '^[0-9a-f]{64}$'),
  document_url text CHECK (char_length(document_url) BETWEEN 1 AND 2048),
  is_current   boolean NOT NULL DEFAULT false,
  published_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (instance_id, term_id) REFERENCES consent_terms (instance_id, id),
  CONSTRAINT consent_term_versions_label_key UNIQUE (instance_id, term_id, version),
  UNIQUE (instance_id, term_id, id)
);
CREATE UNIQUE INDEX consent_term_versions_one_current ON consent_term_versions (term_id) WHERE is_current;

CREATE FUNCTION cartero_consent_term_version_text() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    NEW.body_sha256 := encode(sha256(convert_to(NEW.body, 'UTF8')), 'hex');
  ELSIF (NEW.instance_id, NEW.term_id, NEW.version, NEW.body, NEW.body_sha256, NEW.document_url, NEW.published_at)
        IS DISTINCT FROM (OLD.instance_id, OLD.term_id, OLD.version, OLD.body, OLD.body_sha256, OLD.document_url, OLD.published_at) THEN
    RAISE EXCEPTION 'consent term version % is published: its text cannot change', OLD.id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'consent_term_versions_published_frozen';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER consent_term_versions_text BEFORE INSERT OR UPDATE ON consent_term_versions
  FOR EACH ROW EXECUTE FUNCTION cartero_consent_term_version_text();

-- Consent events: one acceptance (or revocation) of one term version, with its rules. History:
-- never deleted, never collapsed. ip_address, user_agent and evidence are what the caller
-- declared it observed (proof, not verified by Cartero); evidence is json, not jsonb, so it is
-- kept as the text it was stored with (member order untouched).
--
-- Double opt-in (columns ready for the confirmation flow): a double_opt_in event starts pending
-- and authorizes nothing; confirming sets status confirmed, confirmed_at and the confirming
-- request's address and user agent (confirmation_ip, confirmation_user_agent); one left
-- unconfirmed too long becomes expired with expired_at. A single_opt_in event is confirmed from
-- its creation and has no confirmation step (confirmed_at stays null). The checks make those the
-- only shapes a row can take.
--
-- submission_id, form_id and form_name are set only for events a form submission produced
-- (source form; forms arrive with a later issue). form_name is the name the form had; the forms
-- issue reads the current name when the form still exists.
CREATE TABLE consent_events (
  id                      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id             bigint NOT NULL REFERENCES instances(id),
  term_id                 bigint NOT NULL,
  term_version_id         bigint NOT NULL,
  status                  text NOT NULL CHECK (status IN ('confirmed', 'pending', 'expired')),
  method                  text NOT NULL CHECK (method IN ('single_opt_in', 'double_opt_in')),
  source                  text NOT NULL CHECK (source IN ('form', 'api', 'import', 'system')),
  submission_id           bigint,
  form_id                 bigint,
  form_name               text,
  ip_address              inet,
  user_agent              text CHECK (char_length(user_agent) <= 1024),
  evidence                json,
  confirmed_at            timestamptz,
  confirmation_ip         inet,
  confirmation_user_agent text CHECK (char_length(confirmation_user_agent) <= 1024),
  expired_at              timestamptz,
  created_at              timestamptz NOT NULL DEFAULT now(),
  -- The frozen version is one of the term's own.
  FOREIGN KEY (instance_id, term_id, term_version_id) REFERENCES consent_term_versions (instance_id, term_id, id),
  CHECK (method = 'double_opt_in' OR status = 'confirmed'),
  CHECK ((confirmed_at IS NOT NULL) = (method = 'double_opt_in' AND status = 'confirmed')),
  CHECK ((expired_at IS NOT NULL) = (status = 'expired')),
  CHECK (confirmed_at IS NOT NULL OR (confirmation_ip IS NULL AND confirmation_user_agent IS NULL)),
  CHECK ((source = 'form') OR (submission_id IS NULL AND form_id IS NULL AND form_name IS NULL)),
  UNIQUE (instance_id, id)
);
-- The listing: newest first, optionally by term or status.
CREATE INDEX consent_events_time_idx ON consent_events (instance_id, id DESC);
CREATE INDEX consent_events_term_idx ON consent_events (instance_id, term_id, id DESC);
CREATE INDEX consent_events_status_idx ON consent_events (instance_id, status, id DESC);
-- The expiry job (double opt-in): pending events by age, across instances.
CREATE INDEX consent_events_pending_idx ON consent_events (created_at) WHERE status = 'pending';

-- The rules an event declared: allow or deny one purpose on one channel for one identifier.
-- The resolver's question is always (instance, contact, channel, purpose): the contact index
-- answers it with one index range per identifier and purpose and carries what the verdict needs
-- (contact_type, action, event_id), so only the events of the matching rules are read (for their
-- status). The same index serves the contact filter of the listing and the proof export
-- (its leading columns). Emails are stored lowercased (spec), other identifiers as sent.
CREATE TABLE consent_rules (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id  bigint NOT NULL,
  event_id     bigint NOT NULL,
  channel      text NOT NULL CHECK (channel IN ('mail', 'sms', 'wsp', 'call', 'push')),
  contact_type text NOT NULL CHECK (contact_type IN ('email_address', 'phone_number', 'uniquecode')),
  contact      text NOT NULL CHECK (char_length(contact) BETWEEN 1 AND 320),
  purpose_id   bigint NOT NULL,
  action       text NOT NULL CHECK (action IN ('allow', 'deny')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (instance_id, event_id) REFERENCES consent_events (instance_id, id),
  FOREIGN KEY (instance_id, purpose_id) REFERENCES consent_purposes (instance_id, id),
  CHECK (contact_type <> 'email_address' OR contact = lower(contact)),
  -- consent_duplicate_rule, as a constraint too. Its index also reads an event's rules.
  UNIQUE (event_id, channel, purpose_id)
);
CREATE INDEX consent_rules_contact_idx ON consent_rules (instance_id, contact, channel, purpose_id)
  INCLUDE (contact_type, action, event_id);

ALTER TABLE consent_purposes ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON consent_purposes USING (instance_id = cartero_current_instance());
ALTER TABLE consent_terms ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON consent_terms USING (instance_id = cartero_current_instance());
ALTER TABLE consent_term_versions ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON consent_term_versions USING (instance_id = cartero_current_instance());
ALTER TABLE consent_events ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON consent_events USING (instance_id = cartero_current_instance());
ALTER TABLE consent_rules ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON consent_rules USING (instance_id = cartero_current_instance());

-- Grants (009's rule: exactly what tenant code uses; nothing deletes). Updates are granted per
-- column, so the columns that must not change have no update path at all for the tenant role.
GRANT SELECT, INSERT ON consent_purposes TO cartero_tenant;                                    -- CLI create; API list
GRANT SELECT, INSERT ON consent_terms TO cartero_tenant;                                       -- CLI create; API list
GRANT UPDATE (is_active, updated_at) ON consent_terms TO cartero_tenant;                       -- activate, deactivate, new versions
GRANT SELECT, INSERT ON consent_term_versions TO cartero_tenant;                               -- CLI add-version
GRANT UPDATE (is_current) ON consent_term_versions TO cartero_tenant;                          -- CLI set-current
GRANT SELECT, INSERT ON consent_events TO cartero_tenant;                                      -- POST /v1/consent-events
GRANT UPDATE (status, confirmed_at, confirmation_ip, confirmation_user_agent, expired_at)      -- double opt-in confirmation
  ON consent_events TO cartero_tenant;
GRANT SELECT, INSERT ON consent_rules TO cartero_tenant;                                       -- with their event

-- The event outbox gets events that concern no mail (consent.event.*: domain/outbox/kinds.ts).
-- mail_id becomes optional and entity_id names the row such an event is about (consent_events.id
-- for consent.*); exactly one of the two is set. Both changes are catalog-only (no table
-- rewrite); the CHECK is NOT VALID because every existing row has a mail and no entity, and new
-- rows are checked all the same. The event pump needs no change: it joins each event to its mail
-- and marks one without a mail done (stage 2) without shipping it, as it does for an event whose
-- mail was purged, so consent rows never reach ClickHouse's mail_events; the housekeeping of
-- shipped rows removes them. GET /v1/mails's pending counts match by mail_id and never see them.
ALTER TABLE event_outbox ALTER COLUMN mail_id DROP NOT NULL;
ALTER TABLE event_outbox ADD COLUMN entity_id bigint;
ALTER TABLE event_outbox ADD CONSTRAINT event_outbox_subject_check CHECK ((mail_id IS NULL) <> (entity_id IS NULL)) NOT VALID;

-- The purposes a send declares (POST /v1/mails/send purpose_ids): a sender that requires consent
-- sends a recipient only when the resolver allows every one of them (domain/consent/send-hook.ts,
-- asked by the send worker at every try). One row per send that declares any, beside its
-- messages row rather than in it: most sends declare none, and the statement every send runs
-- stays as it was. Goes with its message (the retention purge deletes messages).
CREATE TABLE message_purposes (
  message_id  bigint PRIMARY KEY,
  instance_id bigint NOT NULL,
  purpose_ids bigint[] NOT NULL CHECK (cardinality(purpose_ids) >= 1 AND array_position(purpose_ids, NULL) IS NULL),
  FOREIGN KEY (instance_id, message_id) REFERENCES messages (instance_id, id) ON DELETE CASCADE
);
ALTER TABLE message_purposes ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON message_purposes USING (instance_id = cartero_current_instance());
GRANT SELECT, INSERT ON message_purposes TO cartero_tenant;                                    -- accept; the send gate
