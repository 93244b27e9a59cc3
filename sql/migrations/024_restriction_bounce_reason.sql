-- Why a bounce restriction was put (issue 27): the reason and class of the bounce that caused it,
-- copied onto the restriction when it is made. GET /v1/mail-restrictions and restriction.created
-- show them. Copied rather than read through bounce_id: a restriction has no retention cut, while
-- its bounce goes with its mail at the retention purge (bounce_id then becomes null), and the
-- restriction must keep saying why.
--
-- hard_bounce: the bounce of the move that restricted (domain/mail/transitions.ts); soft_bounce:
-- the bounce that crossed the threshold, whose id now goes to bounce_id too
-- (domain/restrictions/soft-bounces.ts). Null for restrictions not caused by a bounce (unsubscribe,
-- the panel), and for bounce restrictions whose bounce is no longer known.
ALTER TABLE mail_restrictions
  ADD COLUMN bounce_reason text,
  ADD COLUMN bounce_class text CHECK (bounce_class IN ('hard', 'soft'));

-- The rows made since 018 still name their bounce (unless purged).
UPDATE mail_restrictions r SET bounce_reason = b.reason, bounce_class = b.class
  FROM mail_bounces b
 WHERE b.id = r.bounce_id;
