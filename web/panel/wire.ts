/**
 * The JSON of the panel's calls (/v1/private), as the route declarations say it: printed from the
 * OpenAPI document by api/panel-wire-types.ts, and test/panel-wire-types.test.ts fails when this
 * file is stale. web/panel/api.ts names its types from these (docs/panel.md, Wire types).
 */
// generated from the route declarations by `node dist/api/panel-wire-types.js --write`: edit the declarations, not this file
/** The JSON each panel operation answers on success, by its operationId. */
export interface Answers {
  /** Sign in to the operator panel */
  createPanelSession: {
    /** crtsess_ and 43 base64url characters; shown once, stored only as its SHA-256 */
    token: string;
    /** When the session ends if unused; each authenticated request moves it PANEL_SESSION_TTL_SECONDS ahead, never past PANEL_SESSION_MAX_AGE_SECONDS after the login */
    expires_at: string;
    user: {
      id: number;
      email: string;
    };
  };
  /** List the signed-in user's instances */
  listPanelInstances: {
    data: Array<{
      slug: string;
      name: string;
      /** viewer reads; admin also writes; owner also manages members and keys */
      role: "viewer" | "admin" | "owner";
      enabled: boolean;
    }>;
  };
  /** List the instance's members and pending invitations */
  listPanelMembers: {
    /** The members (status member), then the pending invitations (status invited) */
    data: Array<Answers["updatePanelMember"] | Answers["invitePanelMember"]>;
  };
  /** Invite a member */
  invitePanelMember: {
    /** The invitation (DELETE /v1/private/members/invitations/{invitation_id} withdraws it) */
    id: number;
    email: string;
    /** viewer reads; admin also writes; owner also manages members and keys */
    role: "viewer" | "admin" | "owner";
    /** Not a member until the person of this address accepts in the panel */
    status: "invited";
    created_at: string;
    updated_at: string;
  };
  /** Change a member's role */
  updatePanelMember: {
    user_id: number;
    email: string;
    /** viewer reads; admin also writes; owner also manages members and keys */
    role: "viewer" | "admin" | "owner";
    status: "member";
    /** The user is disabled (cartero user disable): still a member, unable to sign in */
    disabled: boolean;
    created_at: string;
    updated_at: string;
  };
  /** List the signed-in user's pending invitations */
  listPanelInvitations: {
    data: Array<{
      id: number;
      instance: {
        slug: string;
        name: string;
      };
      /** viewer reads; admin also writes; owner also manages members and keys */
      role: "viewer" | "admin" | "owner";
      created_at: string;
    }>;
  };
  /** Accept an invitation */
  acceptPanelInvitation: Answers["listPanelInstances"]["data"][number];
  /** Read the instance's settings */
  getPanelInstance: {
    slug: string;
    name: string;
    enabled: boolean;
    /** IANA time zone of the date filters; null: UTC. Set at creation (cartero instance create --tz) */
    tz: string | null;
    /** Mails per second (a fraction allowed); null: no limit */
    send_rate_per_second: number | null;
    /** Mails sent at once before the rate applies; null: no limit */
    send_burst: number | null;
    /** Mails per calendar month; null: no limit */
    monthly_quota: number | null;
    /** Networks the instance’s API keys may be used from; empty: any */
    allowed_cidrs: string[];
    /** The deployment lets the owner set a domain’s DNS checks by hand (PANEL_DNS_OVERRIDE=on): PUT /v1/private/domains/{id}/checks */
    dns_override: boolean;
    created_at: string;
    updated_at: string;
  };
  /** Set the instance's sending limits */
  updatePanelInstanceLimits: Answers["getPanelInstance"];
  /** Replace the instance's IP allow list */
  setPanelInstanceAllowList: Answers["getPanelInstance"];
  /** List the instance's API keys */
  listPanelKeys: {
    data: Array<{
      /** The key’s public id, the middle part of crt.<key_id>.<token> */
      key_id: string;
      scopes: string[];
      /** Networks the key may be used from; empty: any */
      allowed_cidrs: string[];
      /** After this the key is refused; null: never */
      expires_at: string | null;
      /** When it was revoked; null while usable */
      revoked_at: string | null;
      created_at: string;
    }>;
  };
  /** Create an API key */
  createPanelKey: {
    /** The key’s public id, the middle part of crt.<key_id>.<token> */
    key_id: string;
    /** The full key, crt.<key_id>.<token>: shown in this answer only (only a hash of its token is stored) */
    key: string;
    /** The instance’s slug */
    instance: string;
    scopes: string[];
    /** Networks the key may be used from; empty: any */
    allowed_cidrs: string[];
    /** After this the key is refused; null: never */
    expires_at: string | null;
  };
  /** Revoke an API key */
  revokePanelKey: {
    /** The key’s public id, the middle part of crt.<key_id>.<token> */
    key_id: string;
    revoked_at: string;
  };
  /** List the instance's senders */
  listPanelSenders: {
    data: Array<{
      id: number;
      /** Display name. */
      name: string;
      /** Sending address, username@<domain>. */
      email_address: string;
      domain_id: number;
      /** Recomputed at each query from the domain's four DNS checks. */
      domain_is_verified: boolean;
      /** Sending requires the recipient’s consent; changeable only in the panel. */
      is_consent_required: boolean;
      created_at: string;
      updated_at: string;
      /** On the instance's sandbox domain: sends only to the instance's members (409 sandbox_relay_restricted otherwise) */
      is_sandbox: boolean;
    }>;
    pagination: {
      page: number;
      page_size: number;
      has_more: boolean;
      total_items: number | null;
      total_pages: number | null;
    };
  };
  /** Create a sender */
  createPanelSender: Omit<Answers["listPanelSenders"]["data"][number], "is_sandbox"> & {
    /** The instance lacked the address’s domain: it was added, pending, with a DKIM key */
    domain_created: boolean;
  };
  /** Turn a sender's consent requirement on or off */
  updatePanelSender: Omit<Answers["listPanelSenders"]["data"][number], "is_sandbox">;
  /** List the instance's domains */
  listPanelDomains: {
    data: Array<{
      id: number;
      domain: string;
      /** True only when MX, SPF, DKIM and DMARC are all approved. */
      is_verified: boolean;
      mx_status: "pending" | "approved" | "failed";
      spf_status: "pending" | "approved" | "failed";
      dkim_status: "pending" | "approved" | "failed";
      dmarc_status: "pending" | "approved" | "failed";
      created_at: string;
      updated_at: string;
    }>;
    pagination: Answers["listPanelSenders"]["pagination"];
  };
  /** Add a sending domain */
  addPanelDomain: Answers["listPanelDomains"]["data"][number] & {
    /** Host of the bounce+<id>@ return path (MAIL FROM): RETURN_PATH_SUBDOMAIN.<domain>. */
    return_path_domain: string;
    /** Selector of the key that signs mail now; null when the domain has no key. */
    dkim_selector: string | null;
    /** When the records were last resolved; null: never. */
    dns_checked_at: string | null;
    /** The checks were set by the operator without DNS; the scheduled verification skips the domain. */
    checks_overridden: boolean;
    /** The instance's sandbox domain, <slug>.<SANDBOX_DOMAIN>: owned and vouched for by the service, its records the operator's; its senders send only to the instance's members. */
    is_sandbox: boolean;
    dns_records: Array<{
      /** Which of the four checks this record serves. */
      check: "mx" | "spf" | "dkim" | "dmarc";
      type: "TXT" | "MX";
      /** Fully qualified record name, without a trailing dot. */
      name: string;
      /** What to publish; for MX `<priority> <host>`. */
      value: string;
      /** This record's check state (a DKIM record: its key's). */
      status: "pending" | "approved" | "failed";
      /** DKIM records: the key selector. */
      selector?: string;
      /** DKIM records: mail is signed with this key now. */
      signing?: boolean;
    }>;
  };
  /** Read a domain with the DNS records to publish */
  getPanelDomain: Answers["addPanelDomain"];
  /** Verify a domain's records now */
  verifyPanelDomain: Answers["addPanelDomain"];
  /** Rotate a domain's DKIM key */
  rotatePanelDomainDkim: Answers["addPanelDomain"];
  /** Set a domain's DNS checks by hand (operator override) */
  setPanelDomainChecks: Answers["addPanelDomain"];
  /** Check a domain against the mailbox providers' sender rules */
  panelGetDomainCompliance: {
    domain: string;
    checks: Array<{
      /** Stable id of the rule (docs/domains.md lists each with its logic); new rules may be added. */
      rule: "spf_aligned" | "dkim_aligned" | "dmarc_policy" | "dmarc_reports_received" | "one_click_unsubscribe" | "unsubscribe_within_2_days" | "complaint_rate";
      /** pass: met; warn: met short of the recommendation, or about to stop being met; fail: not met; unknown: nothing to judge it by yet. */
      status: "pass" | "fail" | "warn" | "unknown";
      /** What was found, and what to do when it is not a pass. */
      detail: string;
      /** The mailbox providers that publish this rule. */
      applies_to: Array<"gmail" | "yahoo" | "microsoft">;
      /** The provider's published page the rule comes from. */
      source: string;
    }>;
  };
  /** List the DMARC aggregate reports received for a domain */
  panelListDmarcReports: {
    data: Array<{
      /** The report's id in Cartero. */
      id: number;
      /** The reporting organization (some reporters leave it empty). */
      org_name: string;
      /** The reporter's contact address. */
      org_email: string | null;
      /** The reporter's id of the report. */
      report_id: string;
      /** Start of the reported period; the date filters apply to it. */
      begin_at: string;
      /** End of the reported period. */
      end_at: string;
      /** The report format: RFC 9990 when it declares its namespace, else RFC 7489. */
      schema: "rfc7489" | "rfc9990";
      policy: {
        /** The domain the policy was published for: this domain or one of its subdomains. */
        domain: string;
        /** Requested policy: none, quarantine or reject. Lower-cased; null when the report left it out. */
        p: string | null;
        /** Policy for subdomains. Lower-cased; null when the report left it out. */
        sp: string | null;
        /** Policy for non-existent subdomains (RFC 9990). Lower-cased; null when the report left it out. */
        np: string | null;
        /** Percentage the policy applied to (RFC 7489; RFC 9990 has none: null). */
        pct: number | null;
        /** DKIM alignment mode: r (relaxed) or s (strict). Lower-cased; null when the report left it out. */
        adkim: string | null;
        /** SPF alignment mode: r or s. Lower-cased; null when the report left it out. */
        aspf: string | null;
      };
      /** Messages reported: the sum of the records' counts. */
      message_count: number;
      /** Messages whose policy_evaluated has DKIM or SPF pass (aligned): DMARC passed. */
      dmarc_pass_count: number;
      /** message_count - dmarc_pass_count. */
      dmarc_fail_count: number;
      /** The report mail passed DKIM for the reporter's domain. Reports are unauthenticated by nature: false ones may be forged. */
      reporter_authenticated: boolean;
      /** When Cartero received the report. */
      received_at: string;
    }>;
    pagination: Answers["listPanelSenders"]["pagination"];
  };
  /** List the addresses that sent mail as a domain, per the DMARC reports */
  panelListDmarcSources: {
    data: Array<{
      /** The address the reported messages came from, as the reports wrote it. */
      source_ip: string;
      /** Messages from this address in the reports of the range. */
      message_count: number;
      /** Of them, those that passed DMARC (DKIM or SPF pass, aligned). */
      dmarc_pass_count: number;
      /** Those whose DKIM passed aligned. */
      dkim_aligned_pass_count: number;
      /** Those whose SPF passed aligned. */
      spf_aligned_pass_count: number;
      dispositions: {
        /** Delivered as usual. */
        none: number;
        /** Quarantined (spam folder). */
        quarantine: number;
        /** Rejected. */
        reject: number;
      };
      /** The From domain of most of these messages (ties: the first in text order); null when no report gave one. */
      header_from: string | null;
      /** The organizations that reported this address, sorted. */
      reporters: string[];
      /** Messages whose DKIM results include a pass by one of this domain's Cartero selectors: mail sent through Cartero. */
      cartero_signed_count: number;
    }>;
    pagination: Answers["listPanelSenders"]["pagination"];
  };
  /** List the instance's restrictions, with history */
  listPanelRestrictions: {
    data: Array<{
      id: number;
      /** The restricted address, lower-case. */
      recipient: string;
      /** unspecified, unsubscribe, soft_bounce or hard_bounce. Open vocabulary: new values may appear without notice and clients must tolerate them. */
      reason: string | null;
      /** Always null. */
      scope: null;
      /** When the restriction was applied. */
      restricted_at: string | null;
      /** When it was lifted; null while in force. */
      deleted_at: string | null;
      /** Beyond the spec: the reason of the bounce that caused the restriction, in the bounce classifier's vocabulary (userunknown, hostunknown, mailboxfull, filtered, expired, ...; docs/bounces.md). For soft_bounce, the bounce that crossed the threshold. Null when no bounce caused it (unsubscribe, the panel) or its bounce is not known (restrictions older than this field). */
      bounce_reason: string | null;
      /** Beyond the spec: hard or soft, as that bounce was judged. Null when bounce_reason is null for lack of a bounce. */
      bounce_class: "hard" | "soft" | null;
    }>;
    pagination: Answers["listPanelSenders"]["pagination"];
  };
  /** Stop sending to an address */
  addPanelRestriction: Answers["listPanelRestrictions"]["data"][number];
  /** Lift a restriction */
  liftPanelRestriction: Answers["listPanelRestrictions"]["data"][number];
  /** Read the instance's activity per day */
  getPanelDashboard: {
    /** First local day of the range */
    start_date: string;
    /** Last local day of the range (inclusive) */
    end_date: string;
    /** The zone of the days */
    tz: string;
    /** Every local day of the range, oldest first (days without activity are zeros) */
    days: Array<{
      /** The local day */
      date: string;
      /** Mails accepted (received) that day, whatever became of them: the rows of GET /v1/activities/sent for that day. */
      sent: number;
      /** Of those, mails now at status 3 (sent to the recipient's MX): GET /v1/activities/sent with status=3. */
      delivered: number;
      /** Of those, mails now at status 6 (bounced): GET /v1/activities/sent with status=6. */
      bounced: number;
      /** Bounced mails judged hard (the address was restricted at once). */
      bounced_hard: number;
      /** Bounced mails judged soft (bounced minus bounced_hard). */
      bounced_soft: number;
      /** Complaints recorded that day: the rows of GET /v1/mail-complaints for that day. */
      complained: number;
      /** Open events that day: total_items of GET /v1/activities/opens for that day. */
      opened: number;
      /** Opens not flagged as machine-made: total_items with exclude_machine=true. */
      opened_human: number;
      /** Opens flagged as machine-made (opened minus opened_human). */
      opened_machine: number;
      /** Click events that day: total_items of GET /v1/activities/clicks for that day. */
      clicked: number;
      /** Clicks not flagged as machine-made: total_items with exclude_machine=true. */
      clicked_human: number;
      /** Clicks flagged as machine-made (clicked minus clicked_human). */
      clicked_machine: number;
      /** Of the delivered mails (received that day), those opened at least once: GET /v1/activities/sent with status=3 and opened=opened. Over delivered: the open rate. */
      delivered_opened: number;
      /** Of the delivered mails, those with at least one open not flagged as machine-made (their human_opens > 0). Over delivered: the human open rate, shown beside the raw one. A mail opened before human counts existed (human_opens null) is not counted here. */
      delivered_opened_human: number;
      /** Of the delivered mails, those clicked at least once (clicks > 0). Over delivered: the click rate. */
      delivered_clicked: number;
      /** Of the delivered mails, those with a click not flagged as machine-made (human_clicks > 0): the human click rate. */
      delivered_clicked_human: number;
      /** Restrictions added that day (restricted_at), lifted since or not: rows of GET /v1/mail-restrictions. */
      restricted: number;
    }>;
    /** The sums of the days */
    totals: Omit<Answers["getPanelDashboard"]["days"][number], "date">;
    /** The most frequent reasons of the mails counted in bounced (at most 10), most frequent first: the reason of each mail's latest move to bounced, in the bounce classifier's vocabulary (docs/bounces.md); null when it was recorded without one. */
    bounce_reasons: Array<{
      reason: string | null;
      count: number;
    }>;
    /** The restrictions added in the range, per reason, most frequent first (reasons with none are left out). */
    restrictions: Array<{
      reason: "unspecified" | "unsubscribe" | "soft_bounce" | "hard_bounce";
      count: number;
    }>;
  };
  /** Read sent mail per mailbox provider, against the bulk-sender thresholds */
  panelListProviderFigures: {
    /** First local day of the range */
    start_date: string;
    /** Last local day of the range (inclusive) */
    end_date: string;
    /** The zone of the days */
    tz: string;
    /** The sending domain asked for, or null for all */
    domain: string | null;
    /** One row per provider with any mail or event in the range, most mails first. */
    data: Array<{
      /** The mailbox provider */
      provider: "gmail" | "google_workspace" | "yahoo" | "microsoft" | "microsoft_365" | "apple" | "gmx" | "mailru" | "yandex" | "zoho" | "proton" | "comcast" | "orange" | "t_online" | "qq" | "netease" | "naver" | "other";
      /** Mails accepted in the range to this provider, whatever became of them: rows of GET /v1/activities/sent. */
      sent: number;
      /** Of those, mails now at status 3 (sent): GET /v1/activities/sent with status=3. */
      delivered: number;
      /** Of those, mails now at status 5 (deferred, to be retried): GET /v1/activities/sent with status=5. */
      deferred: number;
      /** Of those, mails now at status 6 judged hard bounces. */
      bounced_hard: number;
      /** Of those, mails now at status 6 judged soft bounces. */
      bounced_soft: number;
      /** Complaints (feedback-loop reports) recorded in the range about mails to this provider: rows of GET /v1/mail-complaints. */
      complaints: number;
      /** Unsubscribes made in the range through mails to this provider (the mails' unsubscribe links, RFC 8058 one-click included). */
      unsubscribed: number;
      /** Opens in the range, machine-made ones included: total_items of GET /v1/activities/opens. */
      opened: number;
      /** Opens in the range not flagged as machine-made: GET /v1/activities/opens with exclude_machine=true. */
      opened_human: number;
      /** complaints ÷ delivered; null when nothing was delivered. */
      complaint_rate: number | null;
      /** bounced_hard ÷ (delivered + bounced_hard + bounced_soft): hard bounces among the mails the provider answered; null when none. */
      bounce_rate: number | null;
      /** ok below 0.1 %, warning from 0.1 %, critical from 0.3 % (the thresholds Google and Yahoo publish for bulk senders); no_data when nothing was delivered, or for a provider that sends no per-message complaint reports (Gmail, Google Workspace...) while none arrived: its 0 means unknown, not 0 %. */
      complaint_status: "no_data" | "ok" | "warning" | "critical";
      /** ok below 2 %, warning from 2 %, critical from 5 % of hard bounces (Amazon SES reviews a sender at 5 %, and SES, SendGrid and Mailgun ask for less than 2 %); no_data when the provider answered no mail. */
      bounce_status: "no_data" | "ok" | "warning" | "critical";
    }>;
  };
  /** Read one mailbox provider's figures per day */
  panelListProviderDailyFigures: Omit<Answers["panelListProviderFigures"], "data"> & {
    /** The mailbox provider */
    provider: "gmail" | "google_workspace" | "yahoo" | "microsoft" | "microsoft_365" | "apple" | "gmx" | "mailru" | "yandex" | "zoho" | "proton" | "comcast" | "orange" | "t_online" | "qq" | "netease" | "naver" | "other";
    /** Every local day of the range, oldest first (a day without activity is zeros, its rates null). */
    days: Array<Omit<Answers["panelListProviderFigures"]["data"][number], "provider"> & {
      /** The local day */
      date: string;
    }>;
  };
  /** List webhooks */
  panelListWebhooks: {
    data: Array<{
      id: number;
      name: string;
      /** Endpoint that receives deliveries. */
      url: string;
      /** Event types this webhook receives; null receives all (docs/webhooks.md lists each type and its data). */
      events: Array<"mail.received" | "mail.queued" | "mail.sent" | "mail.deferred" | "mail.bounced" | "mail.dropped" | "mail.onhold" | "mail.opened" | "mail.clicked" | "mail.unsubscribed" | "mail.complained" | "restriction.created" | "restriction.lifted" | "form.submission.created" | "form.submission.confirmed" | "consent.event.created" | "consent.event.confirmed" | "consent.event.expired" | "webhook.test" | "domain.dmarc_report" | "deliverability.threshold_crossed" | "deliverability.threshold_recovered"> | null;
      /** false when paused. */
      is_active: boolean;
      /** Last delivery answered 2xx. */
      last_success_at: string | null;
      /** Last failed delivery. */
      last_failure_at: string | null;
      /** HTTP code of the last delivery; null if no response (timeout or connection error). */
      last_status_code: number | null;
      /** Failed deliveries in a row since the last success. */
      consecutive_failures: number;
      /** First failure of the current streak; null if the last delivery succeeded. */
      failing_since: string | null;
      /** When it was paused for persistent failures; null if not auto-paused. */
      auto_paused_at: string | null;
      /** Until when the secret before the last rotation still signs; null if none in force. */
      previous_secret_expires_at: string | null;
      created_at: string;
      /** Last change of the configuration; a delivery does not change it. */
      updated_at: string;
    }>;
    pagination: Answers["listPanelSenders"]["pagination"];
  };
  /** Create a webhook */
  panelCreateWebhook: Answers["panelListWebhooks"]["data"][number] & {
    /** The signing secret (whsec_<base64>): shown only in this response, not recoverable. */
    secret: string;
  };
  /** Read a webhook */
  panelGetWebhook: Answers["panelListWebhooks"]["data"][number];
  /** Change a webhook, pause or resume it */
  panelUpdateWebhook: Answers["panelListWebhooks"]["data"][number];
  /** Rotate the signing secret */
  panelRotateWebhookSecret: Answers["panelCreateWebhook"];
  /** Send a test event */
  panelTestWebhook: {
    /** The event; its deliveries carry webhook-id msg_<event_id>. */
    event_id: number;
    webhook_id: number;
    type: "webhook.test";
  };
  /** List delivery attempts */
  panelListWebhookDeliveries: {
    data: Array<{
      /** The attempt. */
      id: number;
      /** The delivery (one event to this webhook) the attempt belongs to; POST .../deliveries/{delivery_id}/retry sends its event again. */
      delivery_id: number;
      /** The webhook-id header of the event, stable across its attempts. */
      event_id: string;
      event_type: string;
      /** 1 for the first attempt of the delivery. */
      attempt: number;
      attempted_at: string;
      /** succeeded: answered 2xx; failed: any other answer, none, or interrupted; pending: in flight. */
      status: "succeeded" | "failed" | "pending";
      duration_ms: number | null;
      /** null when there was no answer. */
      status_code: number | null;
      /** Why there was no answer (timeout, connection error, refused address, interrupted). */
      error: string | null;
      /** The first 1 KB of the answer. */
      response_body: string | null;
      /** Where the delivery stands now. */
      delivery_status: "pending" | "succeeded" | "failed" | "cancelled";
    }>;
    pagination: Answers["listPanelSenders"]["pagination"];
  };
  /** Redeliver one event now */
  panelRetryWebhookDelivery: {
    delivery_id: number;
    event_id: string;
  };
  /** Send every event of a time window again */
  panelReplayWebhook: {
    queued: number;
  };
  /** List sent mails with delivery and interaction data */
  panelListSentActivity: {
    data: Array<{
      mail_id: string;
      msg_id: string | null;
      to: string;
      subject: string;
      sender: string | null;
      /** 1 received, 2 queued, 3 sent, 4 dropped, 5 deferred, 6 bounced, 7 onhold */
      status: number | null;
      opens: number;
      clicks: number;
      /** Beyond the spec: the opens no machine rule flagged (docs/tracking.md), what GET /v1/activities/opens counts for this mail with exclude_machine=true. Counted when the event pump judges an open (within a second), so it can trail opens briefly. Null for a mail opened before Cartero counted them. */
      human_opens: number | null;
      /** Beyond the spec: the clicks no machine rule flagged, as human_opens is for opens (a click found later to start a burst is taken off). */
      human_clicks: number | null;
      received_at: string | null;
      queued_at: string | null;
      sent_at: string | null;
      /** Always null: scheduled sending is unavailable. */
      schedule_at: null;
      /** Seconds from reception to sent_at. */
      delay: number | null;
      custom_msg_id: string | null;
      custom_group_code: string | null;
    }>;
    pagination: Answers["listPanelSenders"]["pagination"];
  };
  /** List opens, per open, per recipient or per message */
  panelListOpens: {
    data: Array<{
      mail_id: string;
      msg_id: string | null;
      /** Recipient address (lower-case). */
      to: string;
      /** The sender's address. */
      sender: string;
      opened_at: string;
      sent_at: string | null;
      custom_msg_id: string | null;
      custom_group_code: string | null;
      /** Why the event was judged machine-made (privacy_proxy, image_scanner, link_scanner, prefetch, head_request, click_burst, no_user_agent; docs/tracking.md), or null: a person. */
      machine: string | null;
    } | {
      mail_id: string;
      msg_id: string | null;
      /** Recipient address (lower-case). */
      to: string;
      /** The sender's address. */
      sender: string;
      /** Opens of this recipient in the range. */
      open_count: number;
      first_opened_at: string;
      last_opened_at: string;
      sent_at: string | null;
      custom_msg_id: string | null;
      custom_group_code: string | null;
      /** Opens of this recipient not flagged as machine-made: what the same query counts with exclude_machine=true (open_count). */
      human_open_count: number;
    } | {
      msg_id: string;
      /** The sender's address. */
      sender: string;
      /** The message's subject; null when its recipients' subjects differ (merge tags). */
      subject: string | null;
      /** Opens of the message in the range. */
      open_count: number;
      /** Distinct recipients with at least one open in the range. */
      recipients_opened: number;
      /** Recipients of the message, whether they opened or clicked or not. */
      rcpt_count: number;
      first_opened_at: string;
      last_opened_at: string;
      custom_msg_id: string | null;
      custom_group_code: string | null;
      /** Opens of the message not flagged as machine-made: what the same query counts with exclude_machine=true (open_count). */
      human_open_count: number;
      /** Distinct recipients with an open not flagged as machine-made: what the same query counts with exclude_machine=true (recipients_opened). */
      recipients_opened_human: number;
    }>;
    pagination: Answers["listPanelSenders"]["pagination"];
  };
  /** List clicks, per click, per recipient or per message */
  panelListClicks: {
    data: Array<{
      mail_id: string;
      msg_id: string | null;
      /** Recipient address (lower-case). */
      to: string;
      /** The sender's address. */
      sender: string;
      /** The clicked URL. */
      url_redirect: string | null;
      clicked_at: string;
      sent_at: string | null;
      custom_msg_id: string | null;
      custom_group_code: string | null;
      /** Why the event was judged machine-made (privacy_proxy, image_scanner, link_scanner, prefetch, head_request, click_burst, no_user_agent; docs/tracking.md), or null: a person. */
      machine: string | null;
    } | {
      mail_id: string;
      msg_id: string | null;
      /** Recipient address (lower-case). */
      to: string;
      /** The sender's address. */
      sender: string;
      /** Clicks of this recipient in the range. */
      click_count: number;
      /** Distinct links this recipient clicked in the range. */
      links_clicked: number;
      first_clicked_at: string;
      last_clicked_at: string;
      sent_at: string | null;
      custom_msg_id: string | null;
      custom_group_code: string | null;
      /** Clicks of this recipient not flagged as machine-made: what the same query counts with exclude_machine=true (click_count). */
      human_click_count: number;
    } | {
      msg_id: string;
      /** The sender's address. */
      sender: string;
      /** The message's subject; null when its recipients' subjects differ (merge tags). */
      subject: string | null;
      /** Clicks of the message in the range. */
      click_count: number;
      /** Distinct recipients with at least one click in the range. */
      recipients_clicked: number;
      /** Distinct links per recipient, summed over the recipients. */
      links_clicked: number;
      /** Recipients of the message, whether they opened or clicked or not. */
      rcpt_count: number;
      first_clicked_at: string;
      last_clicked_at: string;
      custom_msg_id: string | null;
      custom_group_code: string | null;
      /** Clicks of the message not flagged as machine-made: what the same query counts with exclude_machine=true (click_count). */
      human_click_count: number;
      /** Distinct recipients with a click not flagged as machine-made: what the same query counts with exclude_machine=true (recipients_clicked). */
      recipients_clicked_human: number;
    }>;
    pagination: Answers["listPanelSenders"]["pagination"];
  };
  /** List delivered mails with no recorded open */
  panelListUnopened: {
    data: Array<{
      mail_id: string;
      msg_id: string | null;
      /** Recipient address (lower-case). */
      to: string;
      subject: string;
      sender: string | null;
      received_at: string | null;
      sent_at: string | null;
      custom_msg_id: string | null;
      custom_group_code: string | null;
    }>;
    pagination: Answers["listPanelSenders"]["pagination"];
  };
  /** Export sent mails (CSV or JSON) */
  panelExportSentActivity: Array<Record<string, unknown>>;
  /** Export opens, per open, per recipient or per message (CSV or JSON) */
  panelExportOpens: Array<Record<string, unknown>>;
  /** Export clicks, per click, per recipient or per message (CSV or JSON) */
  panelExportClicks: Array<Record<string, unknown>>;
  /** Export delivered mails with no recorded open (CSV or JSON) */
  panelExportUnopened: Array<Record<string, unknown>>;
  /** List mails of the last 3 months */
  panelListMails: Answers["panelListSentActivity"];
  /** Read a mail */
  panelGetMail: Answers["panelListSentActivity"]["data"][number];
  /** A mail's state moves, oldest first */
  panelListMailLogs: {
    data: Array<{
      status: number;
      created_at: string;
      /** Why the mail moved, when not an SMTP reply (e.g. accepted, restricted:hard_bounce). */
      reason: string | null;
      smtp_code: number | null;
      smtp_enhanced: string | null;
      smtp_reply: string | null;
      attempt: number | null;
      /** Beyond the spec: why the mail bounced, on the row of a move to bounced (and on a delay report's note), in the bounce classifier's vocabulary (userunknown, hostunknown, mailboxfull, blocked, spamdetected, policyviolation, expired, ...; docs/bounces.md). Null on other rows. */
      bounce_reason: string | null;
      /** Beyond the spec: on the row of a move to bounced, whether the bounce was judged hard (the address is restricted at once) or soft (counted toward the soft-bounce threshold). Null on other rows. */
      bounce_class: "hard" | "soft" | null;
    }>;
    pagination: Answers["listPanelSenders"]["pagination"];
  };
  /** List consent purposes */
  panelListConsentPurposes: {
    data: Array<{
      id: number;
      /** Unique in the instance ignoring case and accents. */
      name: string;
      created_at: string;
    }>;
    pagination: Answers["listPanelSenders"]["pagination"];
  };
  /** Create a consent purpose */
  createPanelConsentPurpose: Answers["panelListConsentPurposes"]["data"][number];
  /** List consent terms with their versions */
  panelListConsentTerms: {
    data: Array<{
      /** The term_id sent when registering consent. */
      id: number;
      name: string;
      type: "data_processing" | "service_terms" | "marketing" | "subscription" | "other";
      /** Fixed when the term is created. */
      purpose_ids: number[];
      channels: Array<"mail" | "sms" | "wsp" | "call" | "push">;
      /** An inactive term cannot receive new consents. */
      is_active: boolean;
      created_at: string;
      updated_at: string;
      versions: Array<{
        /** Version label, unique in the term. */
        version: string;
        /** The full legal text, exactly as published; never changes. */
        body: string;
        document_url: string | null;
        /** At most one version per term; the one a new consent freezes. Publishing does not make a version current. */
        is_current: boolean;
        published_at: string | null;
      }>;
    }>;
    pagination: Answers["listPanelSenders"]["pagination"];
  };
  /** Create a consent term for some purposes on some channels */
  createPanelConsentTerm: Answers["panelListConsentTerms"]["data"][number];
  /** Consent history, newest first, with rules embedded */
  panelListConsentEvents: {
    data: Array<{
      id: number;
      term_id: number;
      /** The version current when the event was registered; frozen. */
      term_version_id: number;
      /** pending (double opt-in not yet confirmed) and expired authorize nothing. */
      status: "confirmed" | "pending" | "expired";
      method: "single_opt_in" | "double_opt_in";
      source: "form" | "api" | "import" | "system";
      /** Only when source is form. */
      submission_id: number | null;
      /** Only when source is form. */
      form_id: number | null;
      /** Only when source is form. */
      form_name: string | null;
      /** When a double opt-in was confirmed; null for single opt-in (in force from created_at). */
      confirmed_at: string | null;
      expired_at: string | null;
      created_at: string;
      rules: Array<{
        id: number;
        channel: "mail" | "sms" | "wsp" | "call" | "push";
        contact_type: "email_address" | "phone_number" | "uniquecode";
        /** Stored form: email addresses lowercased, other identifiers as sent. */
        contact: string;
        purpose_id: number;
        /** A revocation is a deny rule; a deny wins over any allow. */
        action: "allow" | "deny";
        created_at: string;
      }>;
    }>;
    pagination: Answers["listPanelSenders"]["pagination"];
  };
  /** Proof of consent for one contact: every event with its rules, the exact term texts, declared and confirmation evidence */
  panelGetConsentProof: {
    contact: string;
    /** The instance slug. */
    instance: string;
    generated_at: string;
    /** Every event with a rule for the contact, oldest first. */
    events: Array<Answers["panelListConsentEvents"]["data"][number] & {
      declared: {
        ip_address: string | null;
        user_agent: string | null;
        evidence: Record<string, unknown> | null;
      };
      confirmation: {
        confirmed_at: string;
        ip_address: string | null;
        user_agent: string | null;
      } | null;
    }>;
    terms: Array<{
      id: number;
      name: string;
      type: "data_processing" | "service_terms" | "marketing" | "subscription" | "other";
      purpose_ids: number[];
      channels: Array<"mail" | "sms" | "wsp" | "call" | "push">;
    }>;
    /** Each version an event froze, once, with its exact text and that text’s SHA-256 (hex, of its UTF-8 bytes). */
    term_versions: Array<{
      /** The events’ term_version_id. */
      id: number;
      term_id: number;
      version: string;
      body: string;
      body_sha256: string;
      document_url: string | null;
      published_at: string;
    }>;
    purposes: Array<Answers["panelListConsentPurposes"]["data"][number]>;
  };
  /** The current verdict for identifiers on a channel, per purpose */
  panelResolveConsent: {
    data: Array<{
      /** As compared: email addresses lowercased. */
      contact: string;
      contact_type: "email_address" | "phone_number" | "uniquecode";
      channel: "mail" | "sms" | "wsp" | "call" | "push";
      purpose_id: number;
      verdict: "allowed" | "denied" | "no_consent";
      /** The events the verdict rests on, newest first (the denying or the allowing ones); empty for no_consent. */
      event_ids: number[];
    }>;
  };
  /** One consent term with its versions */
  getPanelConsentTerm: Answers["panelListConsentTerms"]["data"][number];
  /** Activate or deactivate a consent term */
  updatePanelConsentTerm: Answers["panelListConsentTerms"]["data"][number];
  /** Publish a version of a term's text */
  addPanelConsentTermVersion: Answers["panelListConsentTerms"]["data"][number];
  /** Make a published version the current one */
  setPanelConsentTermCurrentVersion: Answers["panelListConsentTerms"]["data"][number];
  /** The design document format: Markdown text, field types, defaults, skeleton and module kinds */
  panelGetMailTemplateFormat: {
    /** Markdown specification of the document, in the language asked. */
    format: string;
    /** Fields per node type and the value type each accepts; a field not listed is unknown and has no effect. */
    field_types: Record<string, unknown>;
    /** Starting values of a new row, column and module (modules.<kind>). */
    defaults: Record<string, unknown>;
    /** A minimal complete valid document without warnings. */
    skeleton: Record<string, unknown>;
    modules: Array<{
      kind: string;
      type: string;
      content_key: string;
    }>;
  };
  /** One module kind in detail: fields with types, defaults and an example module */
  panelGetMailTemplateModule: {
    kind: string;
    /** mailup-bee-newsletter-modules-<kind> */
    type: string;
    /** The descriptor key that holds the content. */
    content_key: string;
    description?: string;
    /** The descriptor's node types, their fields and value types. */
    fields: Record<string, unknown>;
    /** Starting values of a new item of the module's lists. */
    item_defaults?: Record<string, unknown>;
    /** A new module of the kind. */
    defaults: Record<string, unknown>;
    /** A complete module with example content, ready to put in a column. */
    example: Record<string, unknown>;
  };
  /** List mail templates */
  panelListMailTemplates: {
    data: Array<{
      id: number;
      /** 1-255 characters; unique per instance ignoring case and accents. */
      name: string;
      subject: string | null;
      /** Already included in html as a hidden block at the start of the body. */
      preheader: string | null;
      /** A draft is sendable only with test_mode: true. */
      status: "draft" | "public";
      description: string | null;
      /** external: listable, publishable and sendable, never editable. */
      provider: "native" | "external";
      created_at: string;
      updated_at: string;
    }>;
    pagination: Answers["listPanelSenders"]["pagination"];
  };
  /** Create a native draft template from a design document */
  panelCreateMailTemplate: Answers["panelListMailTemplates"]["data"][number] & {
    /** Generated from config (and preheader); never accepted as input. */
    html: string | null;
    /** The design document as stored (its compact JSON), at most 262144 bytes. */
    config: Record<string, unknown> | null;
    /** Warnings and suggestions about the stored document. */
    findings: Array<{
      level: "error" | "warning" | "suggestion";
      /** Stable rule name. */
      rule: string;
      /** The node the finding is about, or its nearest ancestor with a uuid. */
      uuid: string | null;
      /** JSON Pointer into config. */
      pointer: string;
      message: string;
      params?: Record<string, unknown>;
    }>;
  };
  /** Check a design document and render it, storing nothing */
  panelValidateMailTemplate: {
    findings: Array<Answers["panelCreateMailTemplate"]["findings"][number]>;
    /** What a create with this body would store. */
    html: string | null;
  };
  /** Read a mail template */
  panelGetMailTemplate: Answers["panelCreateMailTemplate"];
  /** Update a draft template */
  panelUpdateMailTemplate: Answers["panelCreateMailTemplate"];
  /** Delete a template */
  deletePanelTemplate: Answers["panelCreateMailTemplate"];
  /** Publish a template */
  publishPanelTemplate: Answers["panelCreateMailTemplate"];
  /** Return a published template to draft */
  unpublishPanelTemplate: Answers["panelCreateMailTemplate"];
  /** A new draft from an existing template */
  copyPanelTemplate: Answers["panelCreateMailTemplate"];
  /** Send a template to one address to see it in a mailbox */
  testSendPanelTemplate: {
    msg_id: string;
    mails: Array<{
      mail_id: string;
      to: string;
      status: number;
    }>;
    /** The sender’s address. */
    from: string;
  };
  /** List forms, each with its items in display order */
  panelListForms: {
    data: Array<{
      id: number;
      /** Unique ignoring case and accents. */
      name: string;
      kind: "consent" | "advanced";
      type: "registration" | "update";
      dataset_id: number | null;
      /** Names the form’s hosted page, /f/{public_token}. */
      public_token: string;
      is_default: boolean;
      /** A deactivated form answers submissions 404 form_not_found. */
      is_active: boolean;
      requires_confirmation: boolean;
      /** Sender of the auto-reply and of the confirmation mail. */
      auto_reply_sender_id: number | null;
      settings: {
        title?: string;
        header_text?: string;
        footer_text?: string;
        design?: {
          primary_color?: string;
          secondary_color?: string;
          logo_url?: string;
          custom_css?: string;
        };
      } | null;
      created_at: string;
      updated_at: string;
      /** In display order. */
      items: Array<{
        /** The item_id a submission sends. */
        id: number;
        /** separator and text items are shown, never sent. */
        type: "field" | "consent" | "separator" | "text";
        /** field: the catalog field collected. */
        field_key?: string;
        /** field: its catalog type (text, email, phone, number, date, boolean, select). */
        field_type?: string;
        /** field: a select field’s options, else null. */
        options?: string[] | null;
        /** consent: the term accepted. */
        term_id?: number;
        /** consent: the term’s current version, which a submission must send (null: the term has none, so no submission can pass). */
        term_version_id?: number | null;
        /** consent: the channel the consent is given on; identified by the form’s email (mail) or phone (sms, wsp) field. */
        channel?: "mail" | "sms" | "wsp";
        label?: string | null;
        required?: boolean;
        /** text: the block’s text. */
        text?: string;
      }>;
    }>;
    pagination: Answers["listPanelSenders"]["pagination"];
  };
  /** Create a form from its whole definition */
  createPanelForm: Answers["panelListForms"]["data"][number];
  /** Read a form: its items with the ids and term versions a submission sends */
  panelGetForm: Answers["panelListForms"]["data"][number];
  /** Replace a form’s definition */
  updatePanelForm: Answers["panelListForms"]["data"][number];
  /** Activate or deactivate a form */
  setPanelFormActive: Answers["panelListForms"]["data"][number];
  /** Delete a form */
  deletePanelForm: {
    id: number;
    deleted: true;
  };
  /** The hosted page a definition would make, storing nothing */
  previewPanelForm: {
    /** The hosted page (GET /f/{public_token}) as it would be drawn for this definition, its Send button disabled. */
    html: string;
  };
  /** A form's submissions, newest first */
  listPanelFormSubmissions: {
    data: Array<{
      id: number;
      /** form: the hosted page; form_api: POST /v1/forms/{id}/submissions. */
      source: "form" | "form_api";
      status: "pending" | "confirmed";
      /** The values collected, by field_key. */
      field_values: Record<string, unknown>;
      consents: Array<{
        event_id: number;
        term_id: number;
        term_version_id: number;
        status: "confirmed" | "pending" | "expired";
      }>;
      created_at: string;
      confirmed_at: string | null;
    }>;
    pagination: Answers["listPanelSenders"]["pagination"];
  };
  /** A form's auto-reply and team notice addresses */
  getPanelFormMailSettings: {
    auto_reply: {
      subject?: string;
      html?: string;
      text?: string;
      template_id?: number;
    } | null;
    team_notice_emails: string[];
  };
  /** List the field catalog */
  panelListFields: {
    data: Array<{
      id: number;
      /** What dataset columns, imports and lists name the field by; never reused, even after a delete. */
      field_key: string;
      /** Unique in the instance ignoring case and accents. */
      name: string;
      type: "text" | "email" | "phone" | "number" | "date" | "boolean" | "select";
      /** The allowed values of a select field; null for other types. */
      options: string[] | null;
      /** Each null when not set. max_length and pattern apply to text (max_length also to email), min and max to number. */
      rules: {
        /** Characters (code points). */
        max_length: number | null;
        /** ECMAScript regular expression (u flag) the whole value must match. */
        pattern: string | null;
        min: number | null;
        max: number | null;
      };
      /** email and phone: present in every instance, never deletable. */
      is_system: boolean;
      /** A deactivated field keeps validating the columns that declare it but cannot be declared anew. */
      is_active: boolean;
      created_at: string;
      updated_at: string;
    }>;
    pagination: Answers["listPanelSenders"]["pagination"];
  };
  /** Add a field to the catalog */
  createPanelField: Answers["panelListFields"]["data"][number];
  /** List datasets */
  panelListDatasets: {
    data: Array<{
      /** The {id} contacts are added to and records read from. */
      id: number;
      name: string;
      /** An inactive dataset is no longer offered when connecting a form, but still receives contacts by API and from forms already connected. */
      is_active: boolean;
      /** Enabled channels. With exactly one, it decides the identifier: mail identifies by email; sms and wsp by phone. */
      channel: Array<"mail" | "sms" | "wsp"> | null;
      description: string | null;
      created_at: string;
      /** Last change of the dataset itself, not of its contacts. */
      updated_at: string;
    }>;
    pagination: Answers["listPanelSenders"]["pagination"];
  };
  /** Create a dataset */
  createPanelDataset: Answers["panelListDatasets"]["data"][number] & {
    /** The field_key contacts are recognised by (upserted on). */
    identity_field: string;
    /** Declared columns in order, named by the field_key of the catalog. */
    columns: Array<{
      field_key: string;
      required: boolean;
    }>;
  };
  /** Read a dataset with its identifier and columns */
  panelGetDataset: Answers["createPanelDataset"];
  /** Change a dataset: channels, identity field, columns, name, description; activate or deactivate it */
  updatePanelDataset: Answers["createPanelDataset"];
  /** List or search a dataset's contacts */
  panelListDatasetRecords: {
    data: Array<{
      id: number;
      dataset_id: number;
      /** The identity field's value as stored (emails lower-case, phones E.164): contacts are upserted on it. */
      identifier: string;
      /** Every column the contact carries by field_key, typed as its field says (number, boolean, text; dates as YYYY-MM-DD). */
      values: Record<string, string | number | boolean>;
      created_at: string;
      /** Last change of the values; a write that changes nothing leaves it. */
      updated_at: string;
    }>;
    pagination: Answers["listPanelSenders"]["pagination"];
  };
  /** Add or update contacts of a dataset (one, or a batch of up to 1,000) */
  panelAddDatasetContacts: Answers["panelListDatasetRecords"]["data"][number] | {
    results: Array<{
      /** Position of the contact in contacts[]. */
      index: number;
      /** 201 new, 200 updated (or already so), 409/422 refused. */
      status: 200 | 201 | 409 | 422;
      record?: Answers["panelListDatasetRecords"]["data"][number];
      /** A refusal: the 409 rule, or validation_error for a 422. */
      code?: string;
      detail?: string;
      /** A 422: each value refused, at /contacts/<index>/values/<field_key>. */
      errors?: Array<{
        pointer: string;
        code: string;
        message: string;
        params?: Record<string, unknown>;
      }>;
    }>;
    created: number;
    updated: number;
    rejected: number;
  };
  /** Activate or deactivate a field */
  updatePanelField: Answers["panelListFields"]["data"][number];
  /** Delete a field */
  deletePanelField: Answers["panelListFields"]["data"][number];
  /** Import a CSV file of contacts into a dataset (one transaction: all or nothing) */
  importPanelDatasetCsv: {
    key: string;
    dataset_id: number;
    rows: number;
    accepted: number;
    rejected: number;
    created: number;
    updated: number;
    unchanged: number;
    duplicates: number;
    first_rejects: Array<{
      row?: number;
      code?: string;
      field?: string | null;
      rule?: string | null;
      detail?: string;
    }>;
    rejects_url: string | null;
  };
  /** An import's or upload's progress */
  getPanelImport: {
    key: string;
    kind: "dataset_import" | "list_upload";
    /** The dataset or list. */
    target_id: number;
    /** merging: every byte is read, the rows are being written (no measure of its own). */
    status: "reading" | "merging" | "done" | "failed";
    bytes_read: number;
    /** The request's Content-Length; null when it was not sent. */
    bytes_total: number | null;
    /** 0 to 100: the bytes read of the total; 100 once done. */
    percent: number | null;
    started_at: string;
    finished_at: string | null;
    /** When done: what the import or upload request answered. */
    summary: Record<string, unknown> | null;
    /** When failed: the problem the request answered. */
    error: {
      code?: string;
      detail?: string;
    } | null;
    /** When done with refused rows: the rejects file. */
    rejects_url: string | null;
  };
  /** The CSV lists */
  listPanelLists: {
    data: Array<{
      id: number;
      name: string;
      columns: Array<{
        field_key?: string;
        position?: number;
      }>;
      max_rows: number;
      /** Rows of its live uploads. */
      rows: number;
      uploads: Array<Record<string, unknown>>;
      created_at: string;
      updated_at: string;
    }>;
  };
  /** Create a CSV list: each column a catalog field at a position of the file */
  createPanelList: Answers["listPanelLists"]["data"][number];
  /** A list: its columns, row count and live uploads */
  getPanelList: Answers["listPanelLists"]["data"][number];
  /** Delete a list and its rows (its name is free again) */
  deletePanelList: Answers["listPanelLists"]["data"][number];
  /** Upload a CSV file to a list: append its rows, or overwrite the list with them (all or nothing) */
  uploadPanelListCsv: {
    key: string;
    list: Answers["listPanelLists"]["data"][number];
    upload_id: number;
    rows: number;
    accepted: number;
    rejected: number;
    first_rejects: Array<Answers["importPanelDatasetCsv"]["first_rejects"][number]>;
    rejects_url: string | null;
  };
}

/** The JSON body each panel operation takes, by its operationId. */
export interface Bodies {
  /** Sign in to the operator panel */
  createPanelSession: {
    email: string;
    password: string;
  };
  /** Invite a member */
  invitePanelMember: {
    /** The address to invite; it need not have a panel user yet */
    email: string;
    /** viewer reads; admin also writes; owner also manages members and keys */
    role: "viewer" | "admin" | "owner";
  };
  /** Change a member's role */
  updatePanelMember: {
    /** viewer reads; admin also writes; owner also manages members and keys */
    role: "viewer" | "admin" | "owner";
  };
  /** Set the instance's sending limits */
  updatePanelInstanceLimits: {
    /** Mails per second (a fraction allowed); null: no limit */
    send_rate_per_second?: number | null;
    /** Mails sent at once before the rate applies; null: no limit */
    send_burst?: number | null;
    /** Mails per calendar month; null: no limit */
    monthly_quota?: number | null;
  };
  /** Replace the instance's IP allow list */
  setPanelInstanceAllowList: {
    /** The whole list, replacing the current one; empty: every address allowed */
    allowed_cidrs: string[];
  };
  /** Create an API key */
  createPanelKey: {
    scopes: Array<"mail:read" | "mail:send" | "templates:read" | "templates:write" | "consent:read" | "consent:write" | "dataset:read" | "dataset:write" | "form:read" | "form:write" | "senders:read" | "domains:read" | "webhooks:read" | "webhooks:write">;
    /** Networks the key may be used from (default: any) */
    allowed_cidrs?: string[];
    /** When the key stops working (default: never) */
    expires_at?: string | null;
  };
  /** Create a sender */
  createPanelSender: {
    /** The From address */
    email: string;
    /** The From name */
    name: string;
    /** Send only to recipients who gave consent (default false) */
    is_consent_required?: boolean;
  };
  /** Turn a sender's consent requirement on or off */
  updatePanelSender: {
    is_consent_required: boolean;
  };
  /** Add a sending domain */
  addPanelDomain: {
    /** The domain name, e.g. mail.example.com */
    domain: string;
  };
  /** Set a domain's DNS checks by hand (operator override) */
  setPanelDomainChecks: {
    mx?: "pending" | "approved" | "failed";
    spf?: "pending" | "approved" | "failed";
    dkim?: "pending" | "approved" | "failed";
    dmarc?: "pending" | "approved" | "failed";
  };
  /** Stop sending to an address */
  addPanelRestriction: {
    recipient: string;
    /** Default unspecified (a restriction made by hand) */
    reason?: "unspecified" | "unsubscribe" | "soft_bounce" | "hard_bounce";
  };
  /** Create a webhook */
  panelCreateWebhook: {
    name: string;
    /** http(s) URL of a public host. */
    url: string;
    /** Event types this webhook receives; null receives all (docs/webhooks.md lists each type and its data). */
    events?: Array<"mail.received" | "mail.queued" | "mail.sent" | "mail.deferred" | "mail.bounced" | "mail.dropped" | "mail.onhold" | "mail.opened" | "mail.clicked" | "mail.unsubscribed" | "mail.complained" | "restriction.created" | "restriction.lifted" | "form.submission.created" | "form.submission.confirmed" | "consent.event.created" | "consent.event.confirmed" | "consent.event.expired" | "webhook.test" | "domain.dmarc_report" | "deliverability.threshold_crossed" | "deliverability.threshold_recovered"> | null;
  };
  /** Change a webhook, pause or resume it */
  panelUpdateWebhook: {
    name?: string;
    /** http(s) URL of a public host. */
    url?: string;
    /** Event types this webhook receives; null receives all (docs/webhooks.md lists each type and its data). */
    events?: Array<"mail.received" | "mail.queued" | "mail.sent" | "mail.deferred" | "mail.bounced" | "mail.dropped" | "mail.onhold" | "mail.opened" | "mail.clicked" | "mail.unsubscribed" | "mail.complained" | "restriction.created" | "restriction.lifted" | "form.submission.created" | "form.submission.confirmed" | "consent.event.created" | "consent.event.confirmed" | "consent.event.expired" | "webhook.test" | "domain.dmarc_report" | "deliverability.threshold_crossed" | "deliverability.threshold_recovered"> | null;
    /** true resumes a paused webhook (clears auto_paused_at); false pauses it. */
    is_active?: boolean;
  };
  /** Rotate the signing secret */
  panelRotateWebhookSecret: {
    /** true: the previous secret stops signing at once; default: it signs beside the new one for 24 hours. */
    expire_previous?: boolean;
  };
  /** Send every event of a time window again */
  panelReplayWebhook: {
    /** Events that occurred at or after this time... */
    since: string;
    /** ...and before this one (default: now). */
    until?: string;
  };
  /** Create a consent purpose */
  createPanelConsentPurpose: {
    /** Unique in the instance ignoring case and accents. */
    name: string;
  };
  /** Create a consent term for some purposes on some channels */
  createPanelConsentTerm: {
    /** Unique in the instance ignoring case and accents. */
    name: string;
    type: "data_processing" | "service_terms" | "marketing" | "subscription" | "other";
    /** Purposes of the instance (404 consent_purpose_not_found otherwise); fixed from now on. */
    purpose_ids: number[];
    /** Fixed from now on. */
    channels: Array<"mail" | "sms" | "wsp" | "call" | "push">;
  };
  /** Activate or deactivate a consent term */
  updatePanelConsentTerm: {
    /** false: the term receives no new consents (409 consent_term_inactive); true: it does again. */
    is_active: boolean;
  };
  /** Publish a version of a term's text */
  addPanelConsentTermVersion: {
    /** The label, unique in the term (409 consent_term_version_taken). */
    version: string;
    /** The full legal text, at most 1048576 bytes in UTF-8 (413 request_too_large); never changes once published. */
    body: string;
    /** Where the text is published: an http or https URL. */
    document_url?: string;
  };
  /** Make a published version the current one */
  setPanelConsentTermCurrentVersion: {
    /** The label of a published version of the term (404 consent_term_version_not_found). */
    version: string;
  };
  /** Create a native draft template from a design document */
  panelCreateMailTemplate: {
    /** 1-255 characters; null not accepted; unique ignoring case and accents. */
    name: unknown & string;
    /** Up to 254 characters; null empties it. */
    subject?: string | null;
    /** Up to 255 characters; changing it regenerates html. */
    preheader?: string | null;
    /** Up to 5000 characters. */
    description?: string | null;
    /** The complete design document (GET /v1/mail-templates/format), replacing the current one; at most 262144 bytes as compact JSON (UTF-8), else 413 request_too_large with max_bytes. null empties the design and html. */
    config?: Record<string, unknown> | null;
  };
  /** Check a design document and render it, storing nothing */
  panelValidateMailTemplate: {
    /** Up to 254 characters; null empties it. */
    subject?: string | null;
    /** Up to 255 characters; changing it regenerates html. */
    preheader?: string | null;
    /** The complete design document (GET /v1/mail-templates/format), replacing the current one; at most 262144 bytes as compact JSON (UTF-8), else 413 request_too_large with max_bytes. null empties the design and html. */
    config: Record<string, unknown> | null;
  };
  /** Update a draft template */
  panelUpdateMailTemplate: Omit<Bodies["panelCreateMailTemplate"], "name"> & {
    /** 1-255 characters; null not accepted; unique ignoring case and accents. */
    name?: unknown & string;
  };
  /** A new draft from an existing template */
  copyPanelTemplate: {
    /** The new template’s name (unique ignoring case and accents). */
    name: string;
  };
  /** Send a template to one address to see it in a mailbox */
  testSendPanelTemplate: {
    /** The recipient; absent: the caller’s own address. */
    to?: string;
    /** A sender of the instance; absent: the instance’s sandbox sender (sends only to its members). */
    sender_id?: number;
    /** Absent: the template’s subject, else its name. */
    subject?: string;
  };
  /** Create a form from its whole definition */
  createPanelForm: {
    name: string;
    kind: "consent" | "advanced";
    type: "registration" | "update";
    dataset_id?: number | null;
    requires_confirmation?: boolean;
    auto_reply_sender_id?: number | null;
    auto_reply?: {
      subject?: string;
      html?: string;
      text?: string;
      template_id?: number;
    } | null;
    team_notice_emails?: string[];
    settings?: {
      title?: string;
      header_text?: string;
      footer_text?: string;
      design?: {
        primary_color?: string;
        secondary_color?: string;
        logo_url?: string;
        custom_css?: string;
      };
    } | null;
    is_default?: boolean;
    is_active?: boolean;
    items: Array<{
      /** update: an item of this form, kept with its id. */
      id?: number;
      type: "field" | "consent" | "separator" | "text";
      field_key?: string;
      term_id?: number;
      channel?: "mail" | "sms" | "wsp";
      label?: string;
      text?: string;
      required?: boolean;
    }>;
    /** Make the items the fed dataset requires required (adding those absent, at the end) instead of refusing with 409 form_dataset_columns_not_collected. */
    align_dataset_columns?: boolean;
  };
  /** Replace a form’s definition */
  updatePanelForm: Bodies["createPanelForm"];
  /** Activate or deactivate a form */
  setPanelFormActive: {
    /** false: submissions answer 404 form_not_found, as for a missing form. */
    is_active: boolean;
  };
  /** The hosted page a definition would make, storing nothing */
  previewPanelForm: Bodies["createPanelForm"];
  /** Add a field to the catalog */
  createPanelField: {
    /** Lower-case letters, digits and _, starting with a letter; reserved forever (409 field_key_reserved once deleted). */
    key: string;
    /** Unique in the instance ignoring case and accents. */
    name: string;
    type: "text" | "email" | "phone" | "number" | "date" | "boolean" | "select";
    /** text and email. */
    max_length?: number;
    /** text: an ECMAScript regular expression the whole value must match; one that could take more than linear time is refused. */
    pattern?: string;
    /** number. */
    min?: number;
    /** number. */
    max?: number;
    /** select: its values. */
    options?: string[];
  };
  /** Create a dataset */
  createPanelDataset: {
    /** Unique in the instance ignoring case and accents. */
    name: string;
    description?: string | null;
    /** The enabled channels; null declares none (identity_field must then be given). */
    channel?: Array<"mail" | "sms" | "wsp"> | null;
    /** Needed with several channels or none; with exactly one the channel fixes it. */
    identity_field?: string | null;
    /** The columns by field_key; they must include the identity field. */
    columns: Array<{
      key: string;
      required?: boolean;
    }>;
  };
  /** Change a dataset: channels, identity field, columns, name, description; activate or deactivate it */
  updatePanelDataset: {
    /** Unique in the instance ignoring case and accents. */
    name?: string;
    /** null or '' empties it. */
    description?: string | null;
    /** The enabled channels; null declares none (identity_field must then be given). */
    channel?: Array<"mail" | "sms" | "wsp"> | null;
    identity_field?: string | null;
    /** The whole new declaration. */
    columns?: Array<Bodies["createPanelDataset"]["columns"][number]>;
    /** Connected forms left short by the change: align them or keep them (absent: 409 dataset_columns_not_collected_by_forms). */
    connected_forms?: "align" | "keep";
    /** false: no longer offered to forms; it still receives contacts. */
    is_active?: boolean;
  };
  /** Add or update contacts of a dataset (one, or a batch of up to 1,000) */
  panelAddDatasetContacts: {
    /** One contact: field_key to value. Empty values (null, "", spaces) count as not given. */
    values?: Record<string, unknown>;
    /** A batch of 1 to 1,000 contacts. */
    contacts?: unknown[];
  };
  /** Activate or deactivate a field */
  updatePanelField: {
    /** false: it keeps validating the columns that declare it but cannot be declared anew (a system field: 409 field_is_system). */
    is_active: boolean;
  };
  /** Create a CSV list: each column a catalog field at a position of the file */
  createPanelList: {
    /** Unique in the instance ignoring case and accents. */
    name: string;
    /** Each column a catalog field at a 1-based position of the file; without them no file can be uploaded. */
    columns?: Array<{
      key: string;
      position: number;
    }>;
    /** Default 1,000,000. */
    max_rows?: number;
  };
}
// end of the generated types
