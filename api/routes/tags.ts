import type { RouteTag } from '../http/route.js';

/**
 * The groups of the API reference: each route names one (its `tag`), and the OpenAPI document
 * declares every tag its routes use, with this description, in the order the routes list them
 * (api/openapi.ts). The /docs page shows them as its sections.
 */
export const TAGS = {
  senders: {
    name: 'Senders',
    description:
      'The addresses mail is sent from. A sender belongs to a domain; it can send only while that domain is verified ' +
      '(domain_is_verified is recomputed at each read). is_consent_required says whether sending from it checks the ' +
      "recipient's consent against the declared purposes. Senders are created with the admin CLI (cartero sender create).",
  },
  domains: {
    name: 'Domains',
    description:
      'Sending domains and their DNS checks. A domain is verified only when its four checks (MX, SPF, DKIM and DMARC) ' +
      'are all approved; a failed check means the published records do not comply.',
  },
  mails: {
    name: 'Mails',
    description:
      'Sending mail and reading what became of it. A send call gives every recipient its own mail (mail_id) under one ' +
      'message (msg_id); each mail moves through the delivery statuses 1-7 (received, queued, sent, dropped, deferred, ' +
      'bounced, onhold). Mails stay readable for the 3-month online retention window.',
  },
  templates: {
    name: 'Mail templates',
    description:
      'Templates designed as a structured document (config) from which the service generates the HTML. The format of ' +
      'that document is published here; drafts are created, checked and edited through the API, and published in the ' +
      'panel. A draft can be used only in a send with test_mode: true.',
  },
  restrictions: {
    name: 'Restrictions',
    description:
      'Addresses that are never contacted again, and the events behind them. A restriction is the state of an address ' +
      '(reason unsubscribe, soft_bounce or hard_bounce); unsubscribes and complaints are event logs, one row per mail. ' +
      'An unsubscribe writes both an event and a restriction; a complaint alone does not restrict. Read-only: ' +
      'restrictions are lifted in the panel or when the recipient resubscribes.',
  },
  consent: {
    name: 'Consent',
    description:
      'Consent history and its terms. Each consent event records the exact term version accepted and the rules it ' +
      'declared (channel, contact, purpose, allow or deny); the history is never collapsed. The current verdict for a ' +
      'contact comes from the resolver, where a deny wins over an allow. A pending (double opt-in) event authorizes nothing.',
  },
  datasets: {
    name: 'Datasets',
    description:
      'Named collections of contacts, whose columns are fields of the instance’s field catalog. Datasets are created ' +
      'and configured in the panel; the API lists them, adds or updates contacts and searches their records.',
  },
  forms: {
    name: 'Forms',
    description:
      'Capture forms built in the panel. The API reads a form (its items with the ids and term versions a submission ' +
      'sends) and records submissions made from the integrator’s own site, with the form’s validation, double ' +
      'confirmation, auto-reply, team notice and consent recording (source form_api).',
  },
  activities: {
    name: 'Activities',
    description:
      'What happened to sent mail: sent mails with delivery data, opens, clicks and delivered mails never opened, ' +
      'each as a paginated listing (opens and clicks per event, per recipient or per message) and as a full CSV or ' +
      'JSON export. Read from the analytics store, which lags the events by about a second.',
  },
  deliverability: {
    name: 'Deliverability',
    description:
      'Sent mail per mailbox provider (Gmail, Yahoo, Outlook.com, Google Workspace, Microsoft 365, ...), held against the ' +
      'bulk-sender rules Google, Yahoo and Microsoft publish: complaint and hard-bounce rates with their status, per range ' +
      'and per day, from the same data as the activity listings (docs/deliverability.md).',
  },
  webhooks: {
    name: 'Webhooks',
    description:
      'Endpoints that receive the instance’s events (a mail’s status moves, opens, clicks, unsubscribes, complaints, ' +
      'restrictions, consent and form events), signed as Standard Webhooks. A failed delivery is retried on the ' +
      'configured schedule; ' +
      'a webhook failing persistently is paused automatically until resumed with PATCH. Its deliveries can be listed, ' +
      'retried and replayed; its secret is shown only on creation and rotation.',
  },
  publicLinks: {
    name: 'Public links',
    description:
      'The links Cartero puts in mails and pages, followed by recipients rather than called by integrators: the open ' +
      'pixel, tracked clicks, the unsubscribe page (and RFC 8058 one-click), double opt-in confirmation and hosted ' +
      'forms. They need no credentials: the signed token in the path is the credential, and a browser gets HTML pages.',
  },
  panel: {
    name: 'Panel',
    description:
      "The operator panel's own API under /v1/private, not part of the integration contract: a session from " +
      '`POST /v1/private/sessions` (a panel user created with `cartero user create`) instead of an API key, and the ' +
      "member's role in the instance (viewer reads, admin writes, owner also manages members and keys; docs/panel.md).",
  },
} as const satisfies Record<string, RouteTag>;
