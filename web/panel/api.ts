/**
 * The panel's calls to /v1/private (docs/panel.md). The session token lives in this module's memory
 * only: never in a cookie, localStorage or sessionStorage, so no other site's page can make the
 * browser send it (no CSRF) and a reload signs the person out. Same origin only (the CSP's
 * connect-src 'self' allows nothing else).
 */

import type { Answers, Bodies } from './wire.js';

/**
 * The wire's shapes are the server's declarations, printed into wire.ts (docs/panel.md, Wire
 * types): the names below only say which operation's answer or body each one is.
 */
/** One row of a listing's answer. */
type Item<A> = A extends { data: Array<infer T> } ? T : never;
/**
 * A body as the pages collect it: a select's or a checkbox's value is text, and a design
 * document is whatever the editor parsed. The server's schema holds them (a 422 names the
 * field), so a body takes the declared shape with those left open.
 */
type Collected<T> = T extends string
  ? string
  : T extends Array<infer U>
    ? Array<Collected<U>>
    : T extends object
      ? string extends keyof T
        ? unknown
        : { [K in keyof T]: Collected<T[K]> }
      : T;
type Body<Op extends keyof Bodies> = Collected<Bodies[Op]>;

/** A refusal as the panel shows it (built from the problem object the API answers). */
export interface Problem {
  status: number;
  code: string;
  detail: string;
  /** A 422's fields: RFC 6901 pointers into the body, and why. */
  errors?: Array<{ pointer?: string; code?: string; message?: string }>;
}

export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail);
  }
}

let token: string | undefined;
/** Called when a call answers 401 (the session ended or expired): the app shows the login again. */
let onSignedOut: (message: string) => void = () => {};

export function setSignedOutHandler(handler: (message: string) => void): void {
  onSignedOut = handler;
}
export const signedIn = (): boolean => token !== undefined;

async function call<T>(method: string, path: string, options: { slug?: string; body?: unknown; text?: boolean } = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token) headers['authorization'] = `Bearer ${token}`;
  if (options.slug) headers['x-instance-slug'] = options.slug;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body), credentials: 'omit', cache: 'no-store' });
  if (res.status === 204) return undefined as T;
  // A download (the consent proof): the answer's own bytes, as text.
  if (options.text && res.ok) return (await res.text()) as T;
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (res.ok) return body as T;
  // A 422 says which field and why (errors[]): the detail alone only says "see errors".
  const fields = Array.isArray(body['errors']) ? (body['errors'] as Array<{ pointer?: string; message?: string }>).map((e) => `${e.pointer?.slice(1) || 'body'}: ${e.message}`) : [];
  const detail = String(body['detail'] ?? res.statusText) + (fields.length ? ` (${fields.join('; ')})` : '');
  const problem: Problem = { status: res.status, code: String(body['code'] ?? 'error'), detail, ...(Array.isArray(body['errors']) ? { errors: body['errors'] as Problem['errors'] } : {}) };
  if (res.status === 401 && token && path !== '/v1/private/sessions') {
    token = undefined;
    onSignedOut('Your session has ended. Please sign in again.');
  }
  throw new ApiError(problem);
}

export type User = Answers['createPanelSession']['user'];
export type Role = Instance['role'];
export type Instance = Item<Answers['listPanelInstances']>;
export type Member = Extract<Item<Answers['listPanelMembers']>, { status: 'member' }>;
/** An invitation of the instance not yet accepted: listed with the members, not one of them. */
export type Invitation = Extract<Item<Answers['listPanelMembers']>, { status: 'invited' }>;
/** An invitation to the signed-in user. */
export type ReceivedInvitation = Item<Answers['listPanelInvitations']>;

export async function signIn(email: string, password: string): Promise<User> {
  const session = await call<Answers['createPanelSession']>('POST', '/v1/private/sessions', { body: { email, password } });
  token = session.token;
  return session.user;
}

export async function signOut(): Promise<void> {
  try {
    await call<void>('DELETE', '/v1/private/sessions/current');
  } finally {
    token = undefined;
  }
}

export const instances = () => call<Answers['listPanelInstances']>('GET', '/v1/private/instances').then((r) => r.data);
export const members = (slug: string) => call<Answers['listPanelMembers']>('GET', '/v1/private/members', { slug }).then((r) => r.data);
export const inviteMember = (slug: string, email: string, role: Role) => call<Invitation>('POST', '/v1/private/members', { slug, body: { email, role } });
export const withdrawInvitation = (slug: string, id: number) => call<void>('DELETE', `/v1/private/members/invitations/${id}`, { slug });
export const leaveInstance = (slug: string) => call<void>('DELETE', '/v1/private/membership', { slug });
export const invitations = () => call<Answers['listPanelInvitations']>('GET', '/v1/private/invitations').then((r) => r.data);
export const acceptInvitation = (id: number) => call<Instance>('POST', `/v1/private/invitations/${id}/accept`);
export const declineInvitation = (id: number) => call<void>('POST', `/v1/private/invitations/${id}/decline`);
export const changeRole = (slug: string, userId: number, role: Role) => call<Member>('PATCH', `/v1/private/members/${userId}`, { slug, body: { role } });
export const removeMember = (slug: string, userId: number) => call<void>('DELETE', `/v1/private/members/${userId}`, { slug });

// The instance's resources (docs/panel.md, The instance's resources).
/** A page of a listing: its rows and the pagination every listing shares. */
export interface Page<T> {
  data: T[];
  pagination: Answers['listPanelSenders']['pagination'];
}
export type ApiKey = Item<Answers['listPanelKeys']>;
export type CreatedKey = Answers['createPanelKey'];
export type Sender = Item<Answers['listPanelSenders']>;
export type Restriction = Item<Answers['listPanelRestrictions']>;
export type Settings = Answers['getPanelInstance'];
export type Limits = Body<'updatePanelInstanceLimits'>;

export const keys = (slug: string) => call<{ data: ApiKey[] }>('GET', '/v1/private/keys', { slug }).then((r) => r.data);
export const createKey = (slug: string, body: Body<'createPanelKey'>) => call<CreatedKey>('POST', '/v1/private/keys', { slug, body });
export const revokeKey = (slug: string, keyId: string) => call<Answers['revokePanelKey']>('DELETE', `/v1/private/keys/${encodeURIComponent(keyId)}`, { slug });
export const senders = (slug: string, n = 1) => call<Page<Sender>>('GET', `/v1/private/senders${pageQuery(n)}`, { slug });
export const createSender = (slug: string, body: Body<'createPanelSender'>) => call<Answers['createPanelSender']>('POST', '/v1/private/senders', { slug, body });
export const setConsentRequired = (slug: string, id: number, value: boolean) => call<Answers['updatePanelSender']>('PATCH', `/v1/private/senders/${id}`, { slug, body: { is_consent_required: value } });
export const restrictions = (slug: string, n = 1) => call<Page<Restriction>>('GET', `/v1/private/restrictions${pageQuery(n)}`, { slug });
export const addRestriction = (slug: string, body: Body<'addPanelRestriction'>) => call<Restriction>('POST', '/v1/private/restrictions', { slug, body });
export const liftRestriction = (slug: string, id: number) => call<Restriction>('DELETE', `/v1/private/restrictions/${id}`, { slug });
export const settings = (slug: string) => call<Settings>('GET', '/v1/private/instance', { slug });
export const setLimits = (slug: string, body: Limits) => call<Settings>('PATCH', '/v1/private/instance', { slug, body });
export const setAllowList = (slug: string, allowed_cidrs: string[]) => call<Settings>('PUT', '/v1/private/instance/ip-allow-list', { slug, body: { allowed_cidrs } });

export type CheckState = Domain['mx_status'];
export type Domain = Item<Answers['listPanelDomains']>;
export type DnsRecord = DomainWithRecords['dns_records'][number];
export type DomainWithRecords = Answers['getPanelDomain'];
export const domains = (slug: string, n = 1) => call<Page<Domain>>('GET', `/v1/private/domains${pageQuery(n)}`, { slug });
export const domain = (slug: string, id: number) => call<DomainWithRecords>('GET', `/v1/private/domains/${id}`, { slug });
export const addDomain = (slug: string, name: string) => call<DomainWithRecords>('POST', '/v1/private/domains', { slug, body: { domain: name } });
export const verifyDomain = (slug: string, id: number) => call<DomainWithRecords>('POST', `/v1/private/domains/${id}/verify`, { slug });
export type DnsChecks = Body<'setPanelDomainChecks'>;
export const setChecks = (slug: string, id: number, checks: DnsChecks) => call<DomainWithRecords>('PUT', `/v1/private/domains/${id}/checks`, { slug, body: checks });
export const rotateDkim = (slug: string, id: number) => call<DomainWithRecords>('POST', `/v1/private/domains/${id}/rotate-dkim`, { slug });

// DMARC aggregate reports (issue 39): GET /v1/domains/{domain_name}/dmarc-reports and dmarc-sources, mirrored at /v1/private/domains/{domain_name}/….
export type DmarcReport = Item<Answers['panelListDmarcReports']>;
export type DmarcSource = Item<Answers['panelListDmarcSources']>;
/** The range in UTC days: a report's period is one (RFC 7489 §7.2), so a day's reports stay that day's whatever the instance's zone. */
const dmarcPath = (name: string, what: 'reports' | 'sources', range: { start_date: string; end_date: string }, n: number) =>
  `/v1/private/domains/${encodeURIComponent(name)}/dmarc-${what}${pageQuery(n, { ...range, tz: 'UTC' })}`;
export const dmarcReports = (slug: string, name: string, range: { start_date: string; end_date: string }, n = 1) => call<Answers['panelListDmarcReports']>('GET', dmarcPath(name, 'reports', range, n), { slug });
export const dmarcSources = (slug: string, name: string, range: { start_date: string; end_date: string }, n = 1) => call<Answers['panelListDmarcSources']>('GET', dmarcPath(name, 'sources', range, n), { slug });

// A domain against the providers' sender rules (issue 40): GET /v1/domains/{domain_name}/compliance, mirrored at /v1/private/domains/{domain_name}/compliance.
export type Compliance = Answers['panelGetDomainCompliance'];
export type ComplianceCheck = Compliance['checks'][number];
export const domainCompliance = (slug: string, name: string) => call<Compliance>('GET', `/v1/private/domains/${encodeURIComponent(name)}/compliance`, { slug });

export const FIGURES = ['sent', 'delivered', 'bounced', 'bounced_hard', 'bounced_soft', 'complained', 'opened', 'opened_human', 'opened_machine', 'clicked', 'clicked_human', 'clicked_machine',
  'delivered_opened', 'delivered_opened_human', 'delivered_clicked', 'delivered_clicked_human', 'restricted'] as const;
export type Figures = Dashboard['totals'];
export type Dashboard = Answers['getPanelDashboard'];
export const dashboard = (slug: string, range: { start_date?: string; end_date?: string }) =>
  call<Dashboard>('GET', `/v1/private/dashboard?${new URLSearchParams(Object.entries(range).filter(([, v]) => v) as Array<[string, string]>)}`, { slug });

// Per mailbox provider (issue 40): GET /v1/deliverability/providers and /providers/{provider}/daily, mirrored at /v1/private/deliverability/….
export type ProviderRow = Item<Answers['panelListProviderFigures']>;
export type ProviderId = ProviderRow['provider'];
export type RateStatus = ProviderRow['complaint_status'];
export type ProviderDaily = Answers['panelListProviderDailyFigures'];
const rangeQuery = (range: { start_date?: string; end_date?: string }) => new URLSearchParams(Object.entries(range).filter(([, v]) => v) as Array<[string, string]>);
export const providerFigures = (slug: string, range: { start_date?: string; end_date?: string }) =>
  call<Answers['panelListProviderFigures']>('GET', `/v1/private/deliverability/providers?${rangeQuery(range)}`, { slug });
export const providerDaily = (slug: string, provider: ProviderId, range: { start_date?: string; end_date?: string }) =>
  call<ProviderDaily>('GET', `/v1/private/deliverability/providers/${encodeURIComponent(provider)}/daily?${rangeQuery(range)}`, { slug });

// Webhooks: the public /v1/webhooks routes, mirrored at /v1/private/webhooks (docs/panel.md, Webhooks).
export type Webhook = Answers['panelGetWebhook'];
/** Creation and rotation only: the signing secret, never shown again. */
export type WebhookWithSecret = Answers['panelCreateWebhook'];
export type Attempt = Item<Answers['panelListWebhookDeliveries']>;
export type WebhookInput = Body<'panelCreateWebhook'>;
const hook = (id: number, rest = '') => `/v1/private/webhooks/${id}${rest}`;
export const webhooks = (slug: string, n = 1) => call<Page<Webhook>>('GET', `/v1/private/webhooks${pageQuery(n)}`, { slug });
export const webhook = (slug: string, id: number) => call<Webhook>('GET', hook(id), { slug });
export const createWebhook = (slug: string, body: WebhookInput) => call<WebhookWithSecret>('POST', '/v1/private/webhooks', { slug, body });
export const updateWebhook = (slug: string, id: number, body: Body<'panelUpdateWebhook'>) => call<Webhook>('PATCH', hook(id), { slug, body });
export const deleteWebhook = (slug: string, id: number) => call<void>('DELETE', hook(id), { slug });
export const rotateWebhookSecret = (slug: string, id: number, expirePrevious: boolean) =>
  call<WebhookWithSecret>('POST', hook(id, '/rotate-secret'), { slug, body: { expire_previous: expirePrevious } });
export const testWebhook = (slug: string, id: number) => call<Answers['panelTestWebhook']>('POST', hook(id, '/test'), { slug });
/** A webhook's attempts, newest first, 50 a page; `status` keeps one outcome. */
export const deliveries = (slug: string, id: number, n = 1, status?: Attempt['status']) =>
  call<Page<Attempt>>('GET', hook(id, `/deliveries${pageQuery(n, status ? { status } : {}, DELIVERIES_PAGE_SIZE)}`), { slug });
export const DELIVERIES_PAGE_SIZE = 50;
export const retryDelivery = (slug: string, id: number, deliveryId: number) => call<Answers['panelRetryWebhookDelivery']>('POST', hook(id, `/deliveries/${deliveryId}/retry`), { slug });
export const replayWebhook = (slug: string, id: number, range: Body<'panelReplayWebhook'>) => call<Answers['panelReplayWebhook']>('POST', hook(id, '/replay'), { slug, body: range });

// Activity: the public listings, exports and mail reads, mirrored at /v1/private (docs/panel.md, Activity).
export const LISTINGS = ['sent', 'opens', 'clicks', 'unopened'] as const;
export type Listing = (typeof LISTINGS)[number];
export type Row = Record<string, unknown>;
const query = (params: Record<string, string>) => new URLSearchParams(params).toString();
export const activity = (slug: string, listing: Listing, params: Record<string, string>) => call<Page<Row>>('GET', `/v1/private/activities/${listing}?${query(params)}`, { slug });
export const mail = (slug: string, mailId: string) => call<Row>('GET', `/v1/private/mails/${encodeURIComponent(mailId)}`, { slug });
export const mailLogs = (slug: string, mailId: string) => call<Page<Row>>('GET', `/v1/private/mails/${encodeURIComponent(mailId)}/logs?page_size=100`, { slug });

/**
 * An export as the API streams it (the session in a header, so it cannot be a plain link): the
 * file's bytes and its name from Content-Disposition. A refusal before the first byte is the
 * API's problem, thrown as any call's.
 */
export async function download(slug: string, listing: Listing, params: Record<string, string>): Promise<{ blob: Blob; filename: string }> {
  const headers: Record<string, string> = { 'x-instance-slug': slug };
  if (token) headers['authorization'] = `Bearer ${token}`;
  const res = await fetch(`/v1/private/activities/${listing}/export?${query(params)}`, { headers, credentials: 'omit', cache: 'no-store' });
  if (!res.ok) {
    const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (res.status === 401 && token) {
      token = undefined;
      onSignedOut('Your session has ended. Please sign in again.');
    }
    throw new ApiError({ status: res.status, code: String(body['code'] ?? 'error'), detail: String(body['detail'] ?? res.statusText) });
  }
  const disposition = res.headers.get('content-disposition') ?? '';
  const filename = /filename="?([^";]+)"?/.exec(disposition)?.[1] ?? `${listing}.${params['format'] ?? 'csv'}`;
  return { blob: await res.blob(), filename };
}
// Consent (docs/panel.md, Consent): the public consent reads mirrored at /v1/private, and the panel-only operations.
export type Purpose = Item<Answers['panelListConsentPurposes']>;
export type TermVersion = Term['versions'][number];
export type Term = Answers['getPanelConsentTerm'];
export type ConsentRule = ConsentEvent['rules'][number];
export type ConsentEvent = Item<Answers['panelListConsentEvents']>;
export type Verdict = Item<Answers['panelResolveConsent']>;
const term = (id: number, rest = '') => `/v1/private/consent-terms/${id}${rest}`;
export const purposes = (slug: string, n = 1) => call<Page<Purpose>>('GET', `/v1/private/consent-purposes${pageQuery(n)}`, { slug });
export const createPurpose = (slug: string, name: string) => call<Purpose>('POST', '/v1/private/consent-purposes', { slug, body: { name } });
export const terms = (slug: string, n = 1) => call<Page<Term>>('GET', `/v1/private/consent-terms${pageQuery(n)}`, { slug });
export const consentTerm = (slug: string, id: number) => call<Term>('GET', term(id), { slug });
export const createTerm = (slug: string, body: Body<'createPanelConsentTerm'>) => call<Term>('POST', '/v1/private/consent-terms', { slug, body });
export const publishVersion = (slug: string, id: number, body: Body<'addPanelConsentTermVersion'>) => call<Term>('POST', term(id, '/versions'), { slug, body });
export const setCurrentVersion = (slug: string, id: number, version: string) => call<Term>('PUT', term(id, '/current-version'), { slug, body: { version } });
export const setTermActive = (slug: string, id: number, is_active: boolean) => call<Term>('PATCH', term(id), { slug, body: { is_active } });
export const consentHistory = (slug: string, contact: string, n = 1) => call<Page<ConsentEvent>>('GET', `/v1/private/consent-events${pageQuery(n, { contact })}`, { slug });
export const resolveConsent = (slug: string, q: { contact: string; contact_type: string; channel: string; purpose_ids: number[] }) =>
  call<Answers['panelResolveConsent']>('GET', `/v1/private/consent-rules/resolve?${new URLSearchParams({ contacts: q.contact, contact_types: q.contact_type, channel: q.channel, purpose_ids: q.purpose_ids.join(',') })}`, { slug });
/** The proof document exactly as the API answered it (its bytes), to be saved as a file. */
export const consentProofText = (slug: string, contact: string) => call<string>('GET', `/v1/private/consent-events/proof?contact=${encodeURIComponent(contact)}`, { slug, text: true });
// Templates: the public /v1/mail-templates routes mirrored at /v1/private/mail-templates, and the panel's own (docs/panel.md, Templates).
export type Finding = Template['findings'][number];
export type TemplateSummary = Item<Answers['panelListMailTemplates']>;
export type Template = Answers['panelGetMailTemplate'];
export type TemplateFields = Body<'panelUpdateMailTemplate'>;
const tpl = (id: number, rest = '') => `/v1/private/mail-templates/${id}${rest}`;
export const templates = (slug: string, n = 1) => call<Page<TemplateSummary>>('GET', `/v1/private/mail-templates${pageQuery(n)}`, { slug });
export const template = (slug: string, id: number) => call<Template>('GET', tpl(id), { slug });
export const templateFormat = (slug: string) => call<Answers['panelGetMailTemplateFormat']>('GET', '/v1/private/mail-templates/format?lang=en', { slug });
export const templateModule = (slug: string, kind: string) => call<Answers['panelGetMailTemplateModule']>('GET', `/v1/private/mail-templates/format/modules/${encodeURIComponent(kind)}?lang=en`, { slug });
export const createTemplate = (slug: string, body: Body<'panelCreateMailTemplate'>) => call<Template>('POST', '/v1/private/mail-templates', { slug, body });
export const validateTemplate = (slug: string, body: Body<'panelValidateMailTemplate'>) =>
  call<Answers['panelValidateMailTemplate']>('POST', '/v1/private/mail-templates/validate', { slug, body });
export const updateTemplate = (slug: string, id: number, body: TemplateFields) => call<Template>('PATCH', tpl(id), { slug, body });
export const publishTemplate = (slug: string, id: number, publish: boolean) => call<Template>('POST', tpl(id, publish ? '/publish' : '/unpublish'), { slug });
export const copyTemplate = (slug: string, id: number, name: string) => call<Template>('POST', tpl(id, '/copy'), { slug, body: { name } });
export const deleteTemplate = (slug: string, id: number) => call<Template>('DELETE', tpl(id), { slug });
export const testSendTemplate = (slug: string, id: number, body: Body<'testSendPanelTemplate'>) =>
  call<Answers['testSendPanelTemplate']>('POST', tpl(id, '/test-send'), { slug, body });

// Forms (docs/panel.md, Forms): the public form reads and the field catalog mirrored at /v1/private, the panel-only definitions and submissions.
export type FormItem = Form['items'][number];
export type FormSettings = NonNullable<Form['settings']>;
export type Form = Answers['panelGetForm'];
export type CatalogField = FieldDef;
export type FormMailSettings = Answers['getPanelFormMailSettings'];
export type Submission = Item<Answers['listPanelFormSubmissions']>;
/** A definition as PUT/POST /v1/private/forms take it (items with their id keep it). */
export type FormDefinition = Record<string, unknown> & { name: string; items: Array<Record<string, unknown>> };
const formPath = (id: number, rest = '') => `/v1/private/forms/${id}${rest}`;
export const forms = (slug: string, n = 1) => call<Page<Form>>('GET', `/v1/private/forms${pageQuery(n)}`, { slug });
export const form = (slug: string, id: number) => call<Form>('GET', formPath(id), { slug });
export const catalogFields = (slug: string) => call<Page<CatalogField>>('GET', '/v1/private/fields?page_size=100', { slug });
export const formMailSettings = (slug: string, id: number) => call<FormMailSettings>('GET', formPath(id, '/mail-settings'), { slug });
export const createForm = (slug: string, body: FormDefinition) => call<Form>('POST', '/v1/private/forms', { slug, body });
export const updateForm = (slug: string, id: number, body: FormDefinition) => call<Form>('PUT', formPath(id), { slug, body });
/** The hosted page the definition would make, drawn by the API (nothing stored): for a sandboxed frame's srcdoc only. */
export const previewForm = (slug: string, body: FormDefinition) => call<Answers['previewPanelForm']>('POST', '/v1/private/forms/preview', { slug, body });
export const setFormActive = (slug: string, id: number, is_active: boolean) => call<Form>('PATCH', formPath(id), { slug, body: { is_active } });
export const deleteForm = (slug: string, id: number) => call<Answers['deletePanelForm']>('DELETE', formPath(id), { slug });
export const formSubmissions = (slug: string, id: number, n = 1) => call<Page<Submission>>('GET', formPath(id, `/submissions${pageQuery(n)}`), { slug });
export const formSubmissionsCsv = (slug: string, id: number) => call<string>('GET', formPath(id, '/submissions/export'), { slug, text: true });
// Datasets, fields and lists (docs/panel.md, Datasets, fields and imports).
export type FieldDef = Item<Answers['panelListFields']>;
export type Dataset = Answers['panelGetDataset'];
export type DatasetRecord = Item<Answers['panelListDatasetRecords']>;
export type ImportProgress = Answers['getPanelImport'];
export type CsvList = Answers['getPanelList'];
export const fields = (slug: string, n = 1) => call<Page<FieldDef>>('GET', `/v1/private/fields${pageQuery(n)}`, { slug });
export const createField = (slug: string, body: Record<string, unknown>) => call<FieldDef>('POST', '/v1/private/fields', { slug, body });
export const setFieldActive = (slug: string, key: string, is_active: boolean) => call<FieldDef>('PATCH', `/v1/private/fields/${encodeURIComponent(key)}`, { slug, body: { is_active } });
export const deleteField = (slug: string, key: string) => call<FieldDef>('DELETE', `/v1/private/fields/${encodeURIComponent(key)}`, { slug });
export const datasets = (slug: string, n = 1) => call<Page<Dataset>>('GET', `/v1/private/datasets${pageQuery(n)}`, { slug });
export const dataset = (slug: string, id: number) => call<Dataset>('GET', `/v1/private/datasets/${id}`, { slug });
export const createDataset = (slug: string, body: Record<string, unknown>) => call<Dataset>('POST', '/v1/private/datasets', { slug, body });
export const updateDataset = (slug: string, id: number, body: Record<string, unknown>) => call<Dataset>('PATCH', `/v1/private/datasets/${id}`, { slug, body });
export const records = (slug: string, id: number, query: Record<string, string>) =>
  call<Page<DatasetRecord>>('GET', `/v1/private/datasets/${id}/records?${new URLSearchParams({ page_size: '20', ...query })}`, { slug });
export const importProgress = (slug: string, key: string) => call<ImportProgress>('GET', `/v1/private/imports/${key}`, { slug });
/** The rejects file exactly as the API answered it, to be saved. */
export const importRejects = (slug: string, key: string) => call<string>('GET', `/v1/private/imports/${key}/rejects`, { slug, text: true });
export const lists = (slug: string) => call<Answers['listPanelLists']>('GET', '/v1/private/lists', { slug });
export const createList = (slug: string, body: Record<string, unknown>) => call<CsvList>('POST', '/v1/private/lists', { slug, body });
export const deleteList = (slug: string, id: number) => call<CsvList>('DELETE', `/v1/private/lists/${id}`, { slug });
/** A CSV file POSTed as it is (text/csv): an import or a list upload, answered when it is over. */
export async function sendCsv<T>(slug: string, path: string, file: Blob): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', 'content-type': 'text/csv', 'x-instance-slug': slug };
  if (token) headers['authorization'] = `Bearer ${token}`;
  const res = await fetch(path, { method: 'POST', headers, body: file, credentials: 'omit', cache: 'no-store' });
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (res.ok) return body as T;
  const fieldErrors = Array.isArray(body['errors']) ? (body['errors'] as Array<{ pointer?: string; message?: string }>).map((e) => `${e.pointer?.slice(1) || 'body'}: ${e.message}`) : [];
  throw new ApiError({ status: res.status, code: String(body['code'] ?? 'error'), detail: String(body['detail'] ?? res.statusText) + (fieldErrors.length ? ` (${fieldErrors.join('; ')})` : '') });
}

// Paging (docs/panel.md, The web panel): every listing of the API pages the same way (page from 1,
// page_size up to 100, has_more), so one query for a page of any, and every page of one.
/** Rows a page: the API's largest. */
export const PAGE_SIZE = 100;
/** The query of page `n` of a listing, with its filters: `?page_size=100&page=2`. */
export const pageQuery = (n: number, filters: Record<string, string> = {}, size = PAGE_SIZE): string => `?${new URLSearchParams({ ...filters, page_size: String(size), page: String(n) })}`;
/** At most this many pages (2,000 rows) are read for a listing needed whole. */
export const MOST_PAGES = 20;
/** Every row of a listing (up to MOST_PAGES), page after page while has_more says there is more: for the pickers and names a page needs whole. */
export async function everyPage<T>(read: (n: number) => Promise<Page<T>>): Promise<T[]> {
  const rows: T[] = [];
  for (let n = 1; n <= MOST_PAGES; n++) {
    const page = await read(n);
    rows.push(...page.data);
    if (!page.pagination.has_more) break;
  }
  return rows;
}
