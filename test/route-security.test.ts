import t from 'tap';
import { randomBytes } from 'node:crypto';
import type { Route } from '../api/http/route.js';
import { routes } from '../api/routes/index.js';
import { createDataset } from '../domain/datasets/datasets.js';
import { createField } from '../domain/fields/catalog.js';
import { createList } from '../domain/lists/lists.js';
import { createForm } from '../domain/forms/definition.js';
import { createApiKey, SCOPES } from '../domain/tenancy/api-keys.js';
import { setInstanceEnabled } from '../domain/tenancy/instances.js';
import { canonical, rawCall, type RawResponse } from './helpers/auth-matrix.js';
import { makePanelUser, panelHeaders, panelLogin, type PanelUserFixture } from './helpers/panel.js';
import { testDatabases } from './helpers/databases.js';
import { makeSenders, makeTenant, type TestTenant } from './helpers/fixtures.js';
import { startTestWeb } from './helpers/web.js';
import { startTestDnsServer } from './helpers/dns-server.js';
import { restrict } from '../domain/restrictions/restrictions.js';
import { withTenant } from '../domain/tenancy/context.js';
import { createPurpose } from '../domain/consent/purposes.js';
import { addTermVersion, createTerm } from '../domain/consent/terms.js';

/**
 * One security test over every declared route (issue 25, section 4). It walks the route list
 * (api/routes/index.ts) and, for every API-key route, checks against the real web app:
 *  - no credentials: 401, identical to every other 401 (apart from trace_id, X-Request-Id, Date);
 *  - a key of instance B sent with instance A's slug: that same 401;
 *  - a key of the instance holding every scope but the route's: 403 forbidden;
 *  - a key of a disabled instance: 403 forbidden, identical to the scope refusal;
 *  - every id in the path taken from another instance: 404 <resource>_not_found, no data of it;
 *    and, as the control that makes those 404s mean something, the owner's own request succeeds.
 * A route that is neither API-key nor exempt below fails the test; so does a path parameter
 * PATH_IDS cannot make, and a route needing a body to reach its lookup without one in BODIES.
 * A new route is covered the day it is declared. The panel's /v1/private routes (auth session) get
 * the same walk with a session token instead of a key (the last tests): the API's one 401, the
 * API's 403 for a role below the route's, 404 instance_not_found for an instance the user is not a
 * member of, 404 for every id of another instance, and the owner's control.
 */

/** Routes with no API key, each with why: their credential (if any) is something else. */
const PUBLIC_ROUTES: Record<string, string> = {
  'GET /t/o/{token}': 'open pixel put in mails: the signed token in the path is the credential, and a bad one still gets the pixel',
  'GET /t/c/{token}': 'click redirect put in mails: the signed token in the path is the credential',
  'GET /u/{token}': 'unsubscribe page linked from mails: the signed token is the credential',
  'POST /u/{token}': 'unsubscribe (the page form and RFC 8058 one-click from mail clients): the signed token is the credential',
  'GET /c/{token}': 'double opt-in confirmation page linked from the confirmation mail: the signed token is the credential',
  'POST /c/{token}': 'double opt-in confirmation (the page form): the signed token is the credential',
  'GET /fc/{token}': 'form submission confirmation page linked from the confirmation mail: the signed token is the credential',
  'POST /fc/{token}': 'form submission confirmation (the page form): the signed token is the credential',
  'GET /f/{public_token}': 'hosted form page, public by design: the form’s unguessable public token names it',
  'POST /f/{public_token}': 'hosted form submission by a visitor: public token, rate limited per form and address',
  'POST /v1/private/sessions': 'the panel login: the email and password in the body are the credential, failures rate limited per account and address',
};

/** Endpoints mounted outside the route list (api/app.ts), public on purpose. */
const INFRASTRUCTURE: Record<string, string> = {
  'GET /healthz': 'process liveness, probed by routers and load balancers',
  'GET /v1/openapi.json': 'the description of the public API, the same for everyone',
  'GET /docs': 'the interactive reference of that description (issue 29): static, the same for everyone',
  'GET /docs/swagger-ui.js': "the reference's renderer (Swagger UI's browser bundle), a static file",
  'GET /docs/swagger-ui.css': "the reference's stylesheet (Swagger UI's), a static file",
  'GET /docs/init.js': "the reference's configuration, a static script",
};

const dbs = await testDatabases(t, 'routesecurity');
// Webhooks of these instances point at loopback (no worker runs here, nothing is delivered).
// The panel's domain routes verify through a real DNS server on loopback (an empty zone) and
// seal DKIM keys with a key of their own; the owner's DNS override is on, so its route is walked too.
const dns = await startTestDnsServer(t);
const { url } = await startTestWeb(t, dbs, {
  env: { WEBHOOK_ALLOW_PRIVATE: 'true', DNS_SERVERS: dns.address, DKIM_KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'), PANEL_DNS_OVERRIDE: 'on' },
});
const pool = dbs.pool;

const ALL_SCOPES = [...SCOPES];
const a = await makeTenant(pool, { scopes: ALL_SCOPES });
const b = await makeTenant(pool, { scopes: ALL_SCOPES });
const disabled = await makeTenant(pool, { scopes: ALL_SCOPES });
await setInstanceEnabled(pool, disabled.slug, false);

const keyOf = (r: Route) => `${r.method.toUpperCase()} ${r.path}`;
/** A CSV body (the panel's imports and list uploads), sent as text/csv rather than JSON. */
class CsvBody {
  constructor(readonly text: string) {}
}
const call = (method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<RawResponse> =>
  body instanceof CsvBody
    ? fetch(url + path, { method: method.toUpperCase(), headers: { ...headers, 'content-type': 'text/csv' }, body: body.text }).then(async (res) => {
        const text = await res.text();
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        const all: Record<string, string> = {};
        res.headers.forEach((value, name) => (all[name] = value));
        return { status: res.status, headers: all, text, body: parsed } as RawResponse;
      })
    : rawCall(url + path, headers, { method: method.toUpperCase(), body });

/**
 * One instance's resources, made on first use through the same functions the API and the CLI
 * use; every text of them carries the instance's marker, so a body that shows any of it is seen.
 */
class World {
  readonly marker = `secret${randomBytes(5).toString('hex')}`;
  private readonly made = new Map<string, Promise<unknown>>();
  constructor(readonly who: TestTenant) {}

  once<T>(name: string, make: () => Promise<T>): Promise<T> {
    if (!this.made.has(name)) this.made.set(name, make());
    return this.made.get(name) as Promise<T>;
  }

  /** The value of a path parameter, by its registry key ("<segment before it>/{name}"). */
  id(key: string): Promise<string | number> {
    const entry = PATH_IDS[key];
    // Unknown parameters fail the first subtest; here any value will do (auth comes first).
    if (!entry) return Promise.resolve(1);
    return this.once(key, () => ('tenantless' in entry ? Promise.resolve(entry.value) : entry.make(this)));
  }

  async api(method: string, path: string, body?: unknown): Promise<any> {
    const r = await call(method, path, this.who.headers, body);
    if (r.status >= 300) throw new Error(`fixture ${method} ${path} as ${this.who.slug}: ${r.status} ${r.text}`);
    return r.body;
  }

  /** A verified domain with one sender. */
  sending(): Promise<{ domain: string; domainId: number; senderId: number; from: string }> {
    return this.once('#sending', async () => {
      const domain = `${randomBytes(4).toString('hex')}.example.com`;
      const [senderId] = await makeSenders(pool, this.who.tenant, { domain, senders: [{ email: 'news', name: `${this.marker} sender` }] });
      const { rows } = await pool.query<{ id: number }>('SELECT id FROM domains WHERE instance_id = $1 AND name = $2', [this.who.tenant.instanceId, domain]);
      return { domain, domainId: Number(rows[0]!.id), senderId: senderId!, from: `news@${domain}` };
    });
  }

  form(): Promise<{ id: number; items: Array<{ id: number }> }> {
    return this.once('#form', () =>
      createForm(this.who.tenant, pool, {
        name: `${this.marker} form`,
        kind: 'consent',
        type: 'registration',
        items: [{ type: 'field', field_key: 'email', label: `${this.marker} email`, required: true }],
      }),
    );
  }
}

/** An event and its delivery to `hook` as the fan-out writes them (finished, so nothing would send it). */
async function finishedDelivery(who: TestTenant, hook: number, note: string): Promise<number> {
  const body = JSON.stringify({ type: 'webhook.test', timestamp: new Date().toISOString(), data: { webhook_id: hook, note } });
  const { rows } = await pool.query<{ id: string }>(
    `WITH o AS (INSERT INTO event_outbox (instance_id, kind, entity_id, webhooks_done) VALUES ($1, 'webhook.test', $2, true) RETURNING id),
          e AS (INSERT INTO webhook_events (id, instance_id, type, webhook_id, occurred_at, body)
                SELECT id, $1, 'webhook.test', $2, now(), $3 FROM o RETURNING id)
     INSERT INTO webhook_deliveries (instance_id, webhook_id, event_id, status, finished_at)
     SELECT $1, $2, id, 'failed', now() FROM e RETURNING id`,
    [who.tenant.instanceId, hook, body],
  );
  return Number(rows[0]!.id);
}

type PathIdFactory = { code: string; make(w: World): Promise<string | number> };
type Tenantless = { tenantless: string; value: string };

/**
 * The ids a domain with one sender gives (its sender's id, its id, its name), made the same way
 * and refused with the same codes in the public walk (World) and the panel's (PanelWorld).
 */
function sendingIds<W extends { sending(): Promise<{ domain: string; domainId: number; senderId: number }> }>() {
  return {
    'senders/{id}': { code: 'sender_not_found', make: async (w: W) => (await w.sending()).senderId },
    'domains/{id}': { code: 'domain_not_found', make: async (w: W) => (await w.sending()).domainId },
    'domains/{domain_name}': { code: 'domain_not_found', make: async (w: W) => (await w.sending()).domain },
  };
}

/**
 * Every path parameter of the API, by "<segment before it>/{name}" (so {id} of senders and {id}
 * of webhooks are told apart): how to make one in an instance, and the 404 code another instance
 * gets for it. A route with a parameter missing here fails the test until one is added.
 */
const PATH_IDS: Record<string, PathIdFactory | Tenantless> = {
  ...sendingIds<World>(),
  'mails/{mail_id}': {
    code: 'mail_not_found',
    make: async (w) => {
      const { from } = await w.sending();
      const sent = await w.api('POST', '/v1/mails/send', { from, to: [{ email: `${w.marker}@example.org` }], subject: `${w.marker} subject`, html: `<p>${w.marker}</p>` });
      return sent.mails[0].mail_id as string;
    },
  },
  'mail-templates/{template_id}': {
    code: 'mail_template_not_found',
    make: async (w) => (await w.api('POST', '/v1/mail-templates', { name: `${w.marker} template`, subject: `${w.marker} subject` })).id,
  },
  'modules/{kind}': { tenantless: 'a module kind of the template format, the same for every instance', value: 'paragraph' },
  'providers/{provider}': { tenantless: 'a mailbox provider id of the attribution table, the same for every instance', value: 'gmail' },
  'datasets/{id}': {
    code: 'dataset_not_found',
    make: async (w) => (await createDataset(w.who.tenant, pool, { name: `${w.marker} dataset`, channel: ['mail'], columns: [{ key: 'email', required: true }] })).id,
  },
  'forms/{id}': { code: 'form_not_found', make: async (w) => (await w.form()).id },
  'webhooks/{id}': {
    code: 'webhook_not_found',
    make: async (w) => (await w.api('POST', '/v1/webhooks', { name: `${w.marker} webhook`, url: `http://127.0.0.1:9/${w.marker}` })).id,
  },
  'deliveries/{delivery_id}': {
    code: 'webhook_delivery_not_found',
    make: async (w) => finishedDelivery(w.who, Number(await w.id('webhooks/{id}')), w.marker),
  },
};

/**
 * Bodies for the routes whose lookup may come after body validation: valid ones, built from the
 * instance that owns the ids in the path (a caller who knows another instance's form knows its
 * items). A route that requires a body and has a tenant id in its path must be listed.
 */
const BODIES: Record<string, (w: World) => Promise<unknown>> = {
  'PATCH /v1/mail-templates/{template_id}': async (w) => ({ subject: `${w.marker} changed` }),
  'POST /v1/datasets/{id}/contacts': async () => ({ values: { email: `someone-${randomBytes(3).toString('hex')}@example.org` } }),
  'POST /v1/forms/{id}/submissions': async (w) => ({
    items: [{ item_id: (await w.form()).items[0]!.id, value: `someone-${randomBytes(3).toString('hex')}@example.org` }],
  }),
  'PATCH /v1/webhooks/{id}': async (w) => ({ name: `${w.marker} renamed` }),
  'POST /v1/webhooks/{id}/replay': async () => ({ since: new Date(Date.now() - 3_600_000).toISOString() }),
};

interface Param {
  name: string;
  /** The PATH_IDS key. */
  key: string;
}

function paramsOf(path: string): Param[] {
  const segments = path.split('/');
  return segments.flatMap((s, i) => {
    const m = /^\{(\w+)\}$/.exec(s);
    return m ? [{ name: m[1]!, key: `${segments[i - 1]}/${s}` }] : [];
  });
}

function fill(path: string, values: Record<string, string | number>): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(values[name])));
}

/** The path with each parameter taken from the world `from(param)` says. */
async function pathFor(route: Route, from: (p: Param) => World): Promise<string> {
  const values: Record<string, string | number> = {};
  for (const p of paramsOf(route.path)) values[p.name] = await from(p).id(p.key);
  return fill(route.path, values);
}

// ---- The panel's /v1/private routes (auth session): the same walk with session tokens. ----

const sessionRoutes = routes.filter((r) => r.auth.kind === 'session');
const roleOf = (r: Route) => (r.auth.kind === 'session' ? r.auth.role : undefined);

/** One instance's panel people: its owner's session, and its members made on first use. */
class PanelWorld {
  private readonly made = new Map<string, Promise<unknown>>();
  constructor(readonly who: TestTenant) {}
  once<T>(name: string, make: () => Promise<T>): Promise<T> {
    if (!this.made.has(name)) this.made.set(name, make());
    return this.made.get(name) as Promise<T>;
  }
  /** A domain with one sender, made as the API's fixtures make them. */
  sending(): Promise<{ domain: string; domainId: number; senderId: number }> {
    return this.once('#sending', async () => {
      const domain = `${randomBytes(4).toString('hex')}.example.com`;
      const [senderId] = await makeSenders(pool, this.who.tenant, { domain, senders: [{ email: 'news', name: 'News' }] });
      const { rows } = await pool.query<{ id: number }>('SELECT id FROM domains WHERE instance_id = $1 AND name = $2', [this.who.tenant.instanceId, domain]);
      return { domain, domainId: Number(rows[0]!.id), senderId: senderId! };
    });
  }
  /** A user with `role` here (and nowhere else). */
  user(role: 'owner' | 'admin' | 'viewer'): Promise<PanelUserFixture> {
    return this.once(`#user-${role}`, () => makePanelUser(pool, [{ instanceId: this.who.tenant.instanceId, role }]));
  }
  /** A session of that user. */
  session(role: 'owner' | 'admin' | 'viewer'): Promise<string> {
    return this.once(`#${role}`, async () => panelLogin(url, await this.user(role)));
  }
  headers(token: string): Record<string, string> {
    return panelHeaders(token, this.who.slug);
  }
  id(key: string): Promise<number | string> {
    const entry = PANEL_PATH_IDS[key];
    if (!entry) return Promise.resolve(1);
    if ('tenantless' in entry) return Promise.resolve(entry.value);
    // Used up by the route that takes it (an invitation accepted or declined): one per path.
    if (entry.fresh) return entry.make(this);
    return this.once(key, () => entry.make(this));
  }
}

/** Every path parameter of the panel API: how to make one in an instance, and the 404 code another instance gets. */
const PANEL_PATH_IDS: Record<string, { code: string; fresh?: true; make(w: PanelWorld): Promise<number | string> } | { tenantless: string; value: string }> = {
  'members/{user_id}': {
    code: 'member_not_found',
    // A viewer: removing it never meets the last-owner rule.
    make: async (w) => (await makePanelUser(pool, [{ instanceId: w.who.tenant.instanceId, role: 'viewer' }])).id,
  },
  // A pending invitation of the instance to its owner's address: its owner withdraws it
  // (members/invitations/{id}) or, as the invitee, accepts or declines it (invitations/{id}/...);
  // inviting a pending address again gives the same one back, so a path made twice names it twice.
  'invitations/{invitation_id}': {
    code: 'invitation_not_found',
    fresh: true,
    // Written directly: the API refuses to invite a member, and only the owner's session is at hand as the invitee.
    make: async (w) => {
      const owner = await w.user('owner');
      const { rows } = await pool.query<{ id: string }>(
        `INSERT INTO panel_invitations (instance_id, email, role) VALUES ($1, $2, 'viewer')
         ON CONFLICT (instance_id, lower(email)) DO UPDATE SET updated_at = now() RETURNING id`,
        [w.who.tenant.instanceId, owner.email],
      );
      return Number(rows[0]!.id);
    },
  },
  'keys/{key_id}': { code: 'api_key_not_found', make: async (w) => (await createApiKey(pool, { instanceSlug: w.who.slug, scopes: ['mail:read'] })).key_id },
  // With the DMARC listings, mirrored from /v1/domains/{domain_name}/dmarc-*: a domain by its name.
  ...sendingIds<PanelWorld>(),
  'restrictions/{id}': {
    code: 'restriction_not_found',
    make: async (w) => {
      const tenant = w.who.tenant;
      const made = await withTenant(pool, tenant, (c) => restrict(tenant, c, `held-${randomBytes(3).toString('hex')}@example.org`, 'unspecified'));
      return made.restriction.id;
    },
  },
  'webhooks/{id}': {
    code: 'webhook_not_found',
    make: async (w) => {
      const made = await call('POST', '/v1/private/webhooks', w.headers(await w.session('owner')), { name: 'Panel hook', url: `http://127.0.0.1:9/panel-${w.who.slug}` });
      if (made.status !== 201) throw new Error(`panel webhook of ${w.who.slug}: ${made.status} ${made.text}`);
      return made.body.id as number;
    },
  },
  'deliveries/{delivery_id}': { code: 'webhook_delivery_not_found', make: async (w) => finishedDelivery(w.who, Number(await w.id('webhooks/{id}')), 'panel') },
  'mails/{mail_id}': {
    code: 'mail_not_found',
    // Sent with the instance's API key (the panel does not send): its domain's sender.
    make: async (w) => {
      const { domainId } = await w.sending();
      const { rows } = await pool.query<{ name: string }>('SELECT name FROM domains WHERE id = $1', [domainId]);
      const sent = await call('POST', '/v1/mails/send', w.who.headers, { from: `news@${rows[0]!.name}`, to: [{ email: `panel-${w.who.slug}@example.org` }], subject: 'Panel mail', html: '<p>Panel</p>' });
      if (sent.status !== 200 && sent.status !== 201 && sent.status !== 202) throw new Error(`panel mail of ${w.who.slug}: ${sent.status} ${sent.text}`);
      return sent.body.mails[0].mail_id as string;
    },
  },
  // A term with a published version v1 (PUT .../current-version names it).
  'consent-terms/{id}': {
    code: 'consent_term_not_found',
    make: async (w) => {
      const tenant = w.who.tenant;
      const purpose = await createPurpose(tenant, pool, { name: `Panel purpose ${randomBytes(3).toString('hex')}` });
      const term = await createTerm(tenant, pool, { name: `Panel term ${randomBytes(3).toString('hex')}`, type: 'marketing', purposeIds: [purpose.id], channels: ['mail'] });
      await addTermVersion(tenant, pool, term.id, { version: 'v1', body: 'The text.' });
      return term.id;
    },
  },
  // A draft with a design (so it can be published) and a subject (so a test send needs none).
  'mail-templates/{template_id}': {
    code: 'mail_template_not_found',
    make: async (w) => {
      const headers = w.headers(await w.session('owner'));
      const format = await call('GET', '/v1/private/mail-templates/format', headers);
      const made = await call('POST', '/v1/private/mail-templates', headers, { name: `Panel template ${w.who.slug}`, subject: 'Panel', config: format.body.skeleton });
      if (made.status !== 201) throw new Error(`panel template of ${w.who.slug}: ${made.status} ${made.text}`);
      return made.body.id as number;
    },
  },
  'modules/{kind}': { tenantless: 'a module kind of the template format, the same for every instance', value: 'paragraph' },
  // The per-provider figures, mirrored from /v1/deliverability/providers/{provider}/daily.
  'providers/{provider}': { tenantless: 'a mailbox provider id of the attribution table, the same for every instance', value: 'gmail' },
  // A form collecting the email (PUT replaces it with PANEL_BODIES' definition).
  'forms/{id}': {
    code: 'form_not_found',
    make: async (w) =>
      (await createForm(w.who.tenant, pool, { name: `Panel form ${randomBytes(3).toString('hex')}`, kind: 'advanced', type: 'registration', items: [{ type: 'field', field_key: 'email' }] })).id,
  },
  'fields/{key}': {
    code: 'field_not_found',
    make: async (w) => (await createField(w.who.tenant, pool, { key: `f_${randomBytes(4).toString('hex')}`, name: `Panel field ${randomBytes(3).toString('hex')}`, type: 'text' })).field_key,
  },
  'datasets/{id}': {
    code: 'dataset_not_found',
    make: async (w) => (await createDataset(w.who.tenant, pool, { name: `Panel dataset ${randomBytes(3).toString('hex')}`, channel: ['mail'], columns: [{ key: 'email', required: true }] })).id,
  },
  'lists/{id}': {
    code: 'list_not_found',
    make: async (w) => (await createList(w.who.tenant, pool, { name: `Panel list ${randomBytes(3).toString('hex')}`, columns: [{ key: 'email', position: 1 }] })).id,
  },
  // An import run in the instance's web process (the registry is its memory), by its owner.
  'imports/{key}': {
    code: 'import_not_found',
    make: async (w) => {
      const key = `rs${randomBytes(6).toString('hex')}`;
      const made = await call('POST', `/v1/private/datasets/${await w.id('datasets/{id}')}/imports?key=${key}`, w.headers(await w.session('owner')), new CsvBody('email\nnot-an-email\n'));
      if (made.status !== 200) throw new Error(`panel import of ${w.who.slug}: ${made.status} ${made.text}`);
      return key;
    },
  },
};

/** Bodies of the panel routes that need one to reach their lookup. */
const PANEL_BODIES: Record<string, () => unknown> = {
  'PATCH /v1/private/members/{user_id}': () => ({ role: 'admin' }),
  'PATCH /v1/private/senders/{id}': () => ({ is_consent_required: true }),
  'PUT /v1/private/domains/{id}/checks': () => ({ mx: 'approved' }),
  'PATCH /v1/private/webhooks/{id}': () => ({ name: 'Panel hook renamed' }),
  'POST /v1/private/webhooks/{id}/replay': () => ({ since: new Date(Date.now() - 3_600_000).toISOString() }),
  'PATCH /v1/private/consent-terms/{id}': () => ({ is_active: false }),
  'POST /v1/private/consent-terms/{id}/versions': () => ({ version: `v-${randomBytes(3).toString('hex')}`, body: 'Another text.' }),
  'PUT /v1/private/consent-terms/{id}/current-version': () => ({ version: 'v1' }),
  'PATCH /v1/private/mail-templates/{template_id}': () => ({ subject: 'Panel changed' }),
  'POST /v1/private/mail-templates/{template_id}/copy': () => ({ name: `Panel copy ${randomBytes(3).toString('hex')}` }),
  'PUT /v1/private/forms/{id}': () => ({ name: `Panel form ${randomBytes(3).toString('hex')}`, kind: 'advanced', type: 'registration', items: [] }),
  'PATCH /v1/private/forms/{id}': () => ({ is_active: false }),
  'PATCH /v1/private/fields/{key}': () => ({ is_active: false }),
  'PATCH /v1/private/datasets/{id}': () => ({ description: 'Changed in the panel' }),
  'POST /v1/private/datasets/{id}/contacts': () => ({ values: { email: `someone-${randomBytes(3).toString('hex')}@example.org` } }),
  'POST /v1/private/datasets/{id}/imports': () => new CsvBody(`email\nsomeone-${randomBytes(3).toString('hex')}@example.org\n`),
  'POST /v1/private/lists/{id}/uploads': () => new CsvBody(`someone-${randomBytes(3).toString('hex')}@example.org\n`),
};

const panelA = new PanelWorld(a);
const panelB = new PanelWorld(b);

async function panelPath(route: Route, from: (p: Param) => PanelWorld): Promise<string> {
  const values: Record<string, string | number> = {};
  for (const p of paramsOf(route.path)) values[p.name] = await from(p).id(p.key);
  return fill(route.path, values);
}

const apiRoutes = routes.filter((r) => r.auth.kind === 'api_key');
const worldA = new World(a);
const worldB = new World(b);
const tenantParams = (r: Route) => paramsOf(r.path).filter((p) => PATH_IDS[p.key] && !('tenantless' in PATH_IDS[p.key]!));
const needsBody = (r: Route) => r.body !== undefined && (r.bodyRequired ?? true);

t.test('every declared route is API-key or panel-session authenticated, or exempt with a reason', async (t) => {
  const declared = new Set(routes.map(keyOf));
  for (const r of routes) {
    if (r.auth.kind === 'session') {
      t.notOk(PUBLIC_ROUTES[keyOf(r)], `${keyOf(r)} takes a session: it must not be listed as public`);
      t.ok(r.path.startsWith('/v1/private/'), `${keyOf(r)}: a panel route lives under /v1/private`);
      for (const p of paramsOf(r.path)) t.ok(PANEL_PATH_IDS[p.key], `${keyOf(r)}: path parameter ${p.key} has a factory in PANEL_PATH_IDS`);
    } else if (r.auth.kind === 'api_key') {
      t.notOk(PUBLIC_ROUTES[keyOf(r)], `${keyOf(r)} takes an API key: it must not be listed as public`);
    } else {
      t.ok(PUBLIC_ROUTES[keyOf(r)], `${keyOf(r)} is ${r.auth.kind}: an API-key route, or listed in PUBLIC_ROUTES with the reason`);
    }
  }
  for (const k of Object.keys(PUBLIC_ROUTES)) t.ok(declared.has(k), `${k} (PUBLIC_ROUTES) is a declared route: remove stale entries`);
  for (const r of apiRoutes) {
    for (const p of paramsOf(r.path)) t.ok(PATH_IDS[p.key], `${keyOf(r)}: path parameter ${p.key} has a factory in PATH_IDS`);
    if (tenantParams(r).length && needsBody(r)) t.ok(BODIES[keyOf(r)], `${keyOf(r)} needs a body to reach its lookup: one in BODIES`);
  }
  t.ok(apiRoutes.length >= 40, `the walk sees the API (${apiRoutes.length} API-key routes)`);
});

t.test('the infrastructure endpoints outside the route list answer without credentials', async (t) => {
  for (const [k, why] of Object.entries(INFRASTRUCTURE)) {
    const [method, path] = k.split(' ') as [string, string];
    t.equal((await call(method, path, {})).status, 200, `${k}: ${why}`);
  }
});

t.test('credentials, on every API-key route', async (t) => {
  const withoutScope = new Map<string, Promise<Record<string, string>>>();
  const keyWithout = (scope: string) => {
    if (!withoutScope.has(scope)) {
      withoutScope.set(
        scope,
        createApiKey(pool, { instanceSlug: a.slug, scopes: ALL_SCOPES.filter((s) => s !== scope) }).then((k) => ({ authorization: `Bearer ${k.key}`, 'x-instance-slug': a.slug })),
      );
    }
    return withoutScope.get(scope)!;
  };
  const bKeyASlug = { authorization: `Bearer ${b.key}`, 'x-instance-slug': a.slug };

  let ref401: RawResponse | undefined;
  let ref403: RawResponse | undefined;
  for (const r of apiRoutes) {
    const k = keyOf(r);
    const scope = r.auth.kind === 'api_key' ? r.auth.scope : '';
    // Paths of A's own resources: were a check missing, the request would reach real data.
    const path = await pathFor(r, () => worldA);

    const none = await call(r.method, path, {});
    if (!ref401) {
      ref401 = none;
      t.equal(none.status, 401, `${k}: the reference 401`);
      t.equal(none.headers['www-authenticate'], 'Bearer', `${k}: WWW-Authenticate: Bearer`);
      t.equal(none.body?.code, 'unauthorized');
      t.equal(none.body?.trace_id, none.headers['x-request-id'], 'trace_id is the X-Request-Id');
    }
    t.same(canonical(none), canonical(ref401), `${k}: no credentials → the one 401`);
    t.same(canonical(await call(r.method, path, bKeyASlug)), canonical(ref401), `${k}: B's key with A's slug → the one 401`);

    const noScope = await call(r.method, path, await keyWithout(scope));
    if (!ref403) {
      ref403 = noScope;
      t.equal(noScope.status, 403, `${k}: the reference 403`);
      t.equal(noScope.body?.code, 'forbidden');
      t.equal(noScope.headers['www-authenticate'], undefined, 'no WWW-Authenticate on a 403');
    }
    t.same(canonical(noScope), canonical(ref403), `${k}: every scope but ${scope} → 403 forbidden`);
    t.same(canonical(await call(r.method, path, disabled.headers)), canonical(ref403), `${k}: a disabled instance → the same 403`);
  }
});

/** B's data a 404 must not show: its marker (in every name, subject and event) and its slug. */
function leakOf(r: RawResponse): string | undefined {
  return [worldB.marker, b.slug].find((s) => r.text.includes(s));
}

const PROBLEM_FIELDS = ['code', 'detail', 'status', 'title', 'trace_id', 'type'];

t.test('every id in the path taken from another instance → 404 <resource>_not_found, no data', async (t) => {
  for (const r of apiRoutes) {
    const params = tenantParams(r);
    if (!params.length || !params.every((p) => PATH_IDS[p.key])) continue;
    for (const foreign of params) {
      const entry = PATH_IDS[foreign.key] as PathIdFactory;
      // This parameter from B, the others A's own: the 404 is this id's.
      const path = await pathFor(r, (p) => (p.name === foreign.name ? worldB : worldA));
      const body = BODIES[keyOf(r)] ? await BODIES[keyOf(r)]!(worldB) : undefined;
      const res = await call(r.method, path, a.headers, body);
      const label = `${keyOf(r)} as A with B's {${foreign.name}}`;
      t.equal(res.status, 404, `${label}: 404 (${res.text.slice(0, 200)})`);
      t.equal(res.body?.code, entry.code, `${label}: ${entry.code}`);
      t.same(Object.keys(res.body ?? {}).sort(), PROBLEM_FIELDS, `${label}: a problem object and nothing else`);
      t.equal(leakOf(res), undefined, `${label}: nothing of B in the body`);
    }
  }
});

t.test('control: the owner of those ids gets them (so each 404 above is the tenant wall)', async (t) => {
  const withIds = apiRoutes.filter((r) => tenantParams(r).length && tenantParams(r).every((p) => PATH_IDS[p.key]));
  // Deletes last: the other routes still need what they remove.
  const ordered = [...withIds.filter((r) => r.method !== 'delete'), ...withIds.filter((r) => r.method === 'delete')];
  for (const r of ordered) {
    const path = await pathFor(r, () => worldB);
    const body = BODIES[keyOf(r)] ? await BODIES[keyOf(r)]!(worldB) : undefined;
    const res = await call(r.method, path, b.headers, body);
    t.ok(res.status >= 200 && res.status < 300, `${keyOf(r)} as B on B's ids: ${res.status} ${res.status >= 300 ? res.text.slice(0, 300) : ''}`);
  }
});

t.test('credentials, on every panel route: the API\'s 401 and 403, and 404 for an instance not the user\'s', async (t) => {
  t.ok(sessionRoutes.length >= 6, `the walk sees the panel API (${sessionRoutes.length} session routes)`);
  // The references are the public API's own answers: a panel refusal is not told apart from them.
  const ref401 = await call('GET', '/v1/senders', {});
  t.equal(ref401.status, 401);
  const scopeless = await createApiKey(pool, { instanceSlug: a.slug, scopes: ['mail:read'] });
  const ref403 = await call('GET', '/v1/senders', { authorization: `Bearer ${scopeless.key}`, 'x-instance-slug': a.slug });
  t.equal(ref403.status, 403);
  const ownerOfB = await panelB.session('owner');
  const sameLengthSlug = 't-' + 'z'.repeat(a.slug.length - 2);
  const blank = (r: RawResponse, slug: string) => ({ ...canonical(r), text: canonical(r).text.split(slug).join('<slug>') });

  for (const r of sessionRoutes) {
    const k = keyOf(r);
    const path = await panelPath(r, () => panelA);
    for (const [what, headers] of [
      ['no credentials', { 'x-instance-slug': a.slug }],
      ['a well-formed token that is nobody\'s', panelHeaders('crtsess_' + randomBytes(32).toString('base64url'), a.slug)],
      ['an API key of the instance', { authorization: `Bearer ${a.key}`, 'x-instance-slug': a.slug }],
    ] as const) {
      t.same(canonical(await call(r.method, path, headers)), canonical(ref401), `${k}: ${what} → the API's one 401`);
    }
    const role = roleOf(r);
    if (!role) continue;
    const foreign = await call(r.method, path, panelHeaders(ownerOfB, a.slug));
    t.equal(foreign.status, 404, `${k}: B's owner with A's slug → 404`);
    t.equal(foreign.body?.code, 'instance_not_found', `${k}: instance_not_found`);
    const missing = await call(r.method, path, panelHeaders(ownerOfB, sameLengthSlug));
    t.same(blank(foreign, a.slug), blank(missing, sameLengthSlug), `${k}: told exactly what an instance that does not exist tells`);
    const below = role === 'owner' ? 'admin' : role === 'admin' ? 'viewer' : undefined;
    if (below) {
      const refused = await call(r.method, path, panelA.headers(await panelA.session(below)), PANEL_BODIES[k]?.());
      t.same(canonical(refused), canonical(ref403), `${k}: a ${below} (the route needs ${role}) → the API's 403 forbidden`);
    }
  }
});

t.test('every id in a panel path taken from another instance → 404, no data; the owner gets its own', async (t) => {
  const leaks = async () => {
    const { rows } = await pool.query<{ email: string }>('SELECT u.email FROM panel_members m JOIN panel_users u ON u.id = m.user_id WHERE m.instance_id = $1', [b.tenant.instanceId]);
    return rows.map((r) => r.email);
  };
  const withIds = sessionRoutes.filter((r) => paramsOf(r.path).some((p) => !('tenantless' in (PANEL_PATH_IDS[p.key] ?? {}))));
  t.ok(withIds.length >= 2, `panel routes with ids: ${withIds.map(keyOf).join(', ')}`);
  const ownerOfA = await panelA.session('owner');
  for (const r of withIds) {
    const path = await panelPath(r, () => panelB);
    const res = await call(r.method, path, panelA.headers(ownerOfA), PANEL_BODIES[keyOf(r)]?.());
    const param = paramsOf(r.path)[0]!;
    t.equal(res.status, 404, `${keyOf(r)} as A's owner with B's {${param.name}}: 404 (${res.text.slice(0, 200)})`);
    const entry = PANEL_PATH_IDS[param.key]!;
    t.equal(res.body?.code, 'code' in entry ? entry.code : undefined);
    t.same(Object.keys(res.body ?? {}).sort(), PROBLEM_FIELDS, 'a problem object and nothing else');
    for (const email of await leaks()) t.notOk(res.text.includes(email), `nothing of B's members (${email})`);
  }
  const ownerOfB = await panelB.session('owner');
  const ordered = [...withIds.filter((r) => r.method !== 'delete'), ...withIds.filter((r) => r.method === 'delete')];
  for (const r of ordered) {
    const res = await call(r.method, await panelPath(r, () => panelB), panelB.headers(ownerOfB), PANEL_BODIES[keyOf(r)]?.());
    t.ok(res.status >= 200 && res.status < 300, `control: ${keyOf(r)} as B's owner on B's ids: ${res.status} ${res.status >= 300 ? res.text.slice(0, 300) : ''}`);
  }
});
