-- Every instance's sandbox (issue 30, docs/panel.md "The sandbox"): a sending domain the service
-- owns, <slug>.<SANDBOX_DOMAIN>, with a sender sandbox@ on it, so a newcomer can send before
-- publishing a single DNS record. Mailgun's sandbox domains are the model: a sandbox sender sends
-- only to the addresses of the instance's panel members (enabled users); any other recipient is
-- refused at acceptance (409 sandbox_relay_restricted) and, should a membership end before the
-- send, dropped at send time (domain/mail/gates.ts).
--
-- The service vouches for the domain: its four checks are approved and overridden (the scheduled
-- DNS verification leaves it alone), and verify, set-checks and rotate-dkim refuse it. Its records
-- are the operator's to publish once for SANDBOX_DOMAIN (a wildcard). It has no DKIM key of its
-- own: its mail goes out unsigned.

ALTER TABLE domains ADD COLUMN is_sandbox boolean NOT NULL DEFAULT false;
CREATE UNIQUE INDEX domains_one_sandbox_idx ON domains (instance_id) WHERE is_sandbox;

-- Service-wide settings the database needs without the process's configuration. sandbox_domain
-- follows SANDBOX_DOMAIN: release and the CLI write it after migrating (domain/domains/sandbox.ts),
-- renaming the sandboxes when it changed.
CREATE TABLE service_settings (
  name  text PRIMARY KEY,
  value text NOT NULL
);
INSERT INTO service_settings (name, value) VALUES ('sandbox_domain', 'sandbox.cartero.test');

-- The sandbox of one instance, created if it lacks one. SECURITY DEFINER: runs for the instance
-- insert of any role, past row-level security, as the schema's owner.
CREATE FUNCTION cartero_ensure_sandbox(p_instance bigint) RETURNS void
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
DECLARE
  v_domain text;
  v_domain_id bigint;
BEGIN
  SELECT i.slug || '.' || s.value INTO v_domain
    FROM instances i, service_settings s WHERE i.id = p_instance AND s.name = 'sandbox_domain';
  INSERT INTO domains (instance_id, name, mx_status, spf_status, dkim_status, dmarc_status, checks_overridden, is_sandbox)
  VALUES (p_instance, v_domain, 'approved', 'approved', 'approved', 'approved', true, true)
  ON CONFLICT DO NOTHING
  RETURNING id INTO v_domain_id;
  IF v_domain_id IS NOT NULL THEN
    INSERT INTO senders (instance_id, domain_id, name, email_address)
    VALUES (p_instance, v_domain_id, 'Sandbox', 'sandbox@' || v_domain)
    ON CONFLICT DO NOTHING;
  END IF;
END
$$;

CREATE FUNCTION cartero_instance_sandbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM cartero_ensure_sandbox(NEW.id);
  RETURN NULL;
END
$$;
CREATE TRIGGER instances_sandbox AFTER INSERT ON instances FOR EACH ROW EXECUTE FUNCTION cartero_instance_sandbox();

SELECT cartero_ensure_sandbox(id) FROM instances ORDER BY id;

-- The addresses a sandbox sender may send to: the current tenant's members whose user is
-- enabled, lower-cased. SECURITY DEFINER so tenant code (acceptance, the send gates) reads them
-- without any grant on panel_users or panel_members; it sees only its own instance's.
CREATE FUNCTION cartero_member_addresses() RETURNS SETOF text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
  SELECT lower(u.email) FROM panel_members m JOIN panel_users u ON u.id = m.user_id
   WHERE m.instance_id = cartero_current_instance() AND u.disabled_at IS NULL
$$;
REVOKE ALL ON FUNCTION cartero_member_addresses() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cartero_member_addresses() TO cartero_tenant;
REVOKE ALL ON FUNCTION cartero_ensure_sandbox(bigint) FROM PUBLIC;
