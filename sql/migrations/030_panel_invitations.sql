-- Invitations to an instance (issue 37, docs/panel.md "Invitations"). An owner's
-- POST /v1/private/members no longer makes anyone a member: it stores an invitation for an
-- address, and the person of that address becomes a member only by accepting it in the panel
-- (or declines it). Until then it is no member for anything: not in panel_members, so no role
-- (the session lookup reads panel_members), no instance in its switcher, and no sandbox mail
-- (cartero_member_addresses() reads panel_members only).
--
-- Keyed by address, not by user: the owner's answer is the same whether a user has the address
-- or not (no probe), and an invitation to an address nobody has yet waits here; it shows to the
-- user created later with that address. The operator's `cartero member add` still writes
-- panel_members directly (the operator is trusted).
--
-- Service role only, as panel_members (026): authentication decides the tenant, and the
-- invitee's own routes run outside any tenant; every statement names its instance_id or the
-- invitee's address. Row-level security with the tenant_isolation policy all the same, the
-- second wall should a later migration grant the table to tenant code.
CREATE TABLE panel_invitations (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id bigint NOT NULL REFERENCES instances(id),
  email       text NOT NULL CHECK (length(email) BETWEEN 1 AND 320),
  role        text NOT NULL CHECK (role IN ('owner', 'admin', 'viewer')),
  -- Who invited (an owner then); kept if that user is later removed from the instance.
  invited_by  bigint REFERENCES panel_users(id),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
-- One pending invitation per instance and address, whatever its case; inviting again changes its role.
CREATE UNIQUE INDEX panel_invitations_instance_email_key ON panel_invitations (instance_id, lower(email));
-- The invitee's list: by address.
CREATE INDEX panel_invitations_email_idx ON panel_invitations (lower(email));

ALTER TABLE panel_invitations ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON panel_invitations USING (instance_id = cartero_current_instance());
