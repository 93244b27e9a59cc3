import { randomBytes } from 'node:crypto';
import type { Response } from 'express';
import { RateLimiterRes, type RateLimiterPostgres } from 'rate-limiter-flexible';
import { AppError, RateLimited, ValidationFailed, type FieldError } from '../../domain/errors.js';
import { hostedPageData, type HostedItem } from '../../domain/forms/hosted-page.js';
import { CHANNEL_FIELD, getFormByPublicToken, type Form } from '../../domain/forms/read.js';
import { submitForm, type SubmissionItemInput } from '../../domain/forms/submit.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import type { Pool } from '../../sql/pool.js';
import { sharedRateLimiter } from '../../sql/rate-limits.js';
import { formPage, formRefusedPage, formSentPage, HONEYPOT, type PageForm, type PageState } from '../pages/form-page.js';
import { sendLinkNotValid, sendPage } from '../pages/public-pages.js';
import { defineRoute, type AppDeps } from '../http/route.js';
import { TAGS } from './tags.js';

/**
 * The hosted form (spec: Form, public_token): GET /f/{public_token} draws the form, POST submits
 * it through the same domain function as POST /v1/forms/{id}/submissions (domain/forms/submit.ts,
 * every rule the same) with source form and the request's own address and user agent. A refusal
 * of the answers draws the page again with each error beside its item (422); a submission
 * answers a page saying it is received, or to check the mail when the form requires
 * confirmation. Its anti-bot protection, which the API leaves to the integrator: a honeypot
 * field (filled: answered like a success, nothing stored) and a per-address limit of
 * FORM_PAGE_RATE_PER_MINUTE submissions. docs/forms.md, Hosted page.
 */

// A form's answers: a few dozen fields of at most 10,000 characters (VALUE_MAX_LENGTH) is far below.
const MAX_FORM_BYTES = 256 * 1024;
// Images the page may load: the form's logo (settings.design.logo_url, http or https only).
const IMG_SRC = 'https: http:';
/** A page's submission key: 16 random bytes, base64url. */
const SUBMISSION_KEY = /^[A-Za-z0-9_-]{22}$/;

const newSubmissionKey = () => randomBytes(16).toString('base64url');

/**
 * Submissions per client address per minute, one budget for every web dyno on the database
 * (sql/rate-limits.ts: in Postgres, in memory while Postgres is unreachable). Per address, not per
 * form, as before it was shared: a bot spraying many forms is held to one budget. One limiter
 * object per pool and size (each web app; test apps of other sizes count apart).
 */
const limiters = new WeakMap<Pool, Map<number, RateLimiterPostgres>>();
function limiterOf(pool: Pool, perMinute: number): RateLimiterPostgres {
  let bySize = limiters.get(pool);
  if (!bySize) limiters.set(pool, (bySize = new Map()));
  let limiter = bySize.get(perMinute);
  if (!limiter) bySize.set(perMinute, (limiter = sharedRateLimiter(pool, 'form_page', perMinute)));
  return limiter;
}

const common = {
  path: '/f/{public_token}',
  tag: TAGS.publicLinks,
  auth: { kind: 'public' },
  params: { public_token: { type: 'string', description: 'The form’s public_token (GET /v1/forms/{id}).' } },
  errorPages: true,
} as const;

const wantsHtml = (res: Response) => res.req.accepts(['json', 'html']) === 'html';

/**
 * The page's form: the API's form (or a definition not written yet: the panel's preview) with what
 * the page shows besides (catalog fields, term texts).
 */
export async function pageFormOf(tenant: Tenant, deps: AppDeps, form: { name: string; settings: unknown; items: readonly HostedItem[] }): Promise<PageForm> {
  const data = await hostedPageData(tenant, deps.pool, form.items);
  return {
    name: form.name,
    settings: form.settings,
    items: form.items.map((item) => {
      switch (item.type) {
        case 'field':
          return {
            id: item.id,
            type: 'field',
            fieldKey: item.field_key,
            label: item.label ?? item.field_key,
            required: item.required,
            field: data.fields.get(item.field_key),
          };
        case 'consent': {
          const term = data.terms.get(item.term_id);
          return {
            id: item.id,
            type: 'consent',
            label: item.label ?? term?.name ?? `Consent ${item.term_id}`,
            required: item.required,
            termVersionId: item.term_version_id ?? 0,
            term,
          };
        }
        default:
          return item;
      }
    }),
  };
}

/** The form a token names, or undefined once the 404 (page or problem) is answered. */
async function formOf(deps: AppDeps, token: string, res: Response): Promise<{ tenant: Tenant; form: Form } | undefined> {
  const found = await getFormByPublicToken(deps.pool, token);
  if (!found) {
    sendLinkNotValid(res, 'This form does not exist or no longer takes answers');
    return undefined;
  }
  return found;
}

/**
 * The submission the posted fields make, in the API's terms: every field and consent item of the
 * form once (an empty field null, an unchecked box false), each consent with the term version the
 * page showed.
 */
function submissionOf(form: Form, fields: Record<string, string>): SubmissionItemInput[] {
  const items: SubmissionItemInput[] = [];
  for (const item of form.items) {
    const posted = fields[`item_${item.id}`];
    if (item.type === 'field') {
      if (item.field_type === 'boolean') items.push({ item_id: item.id, value: posted === 'true' });
      else items.push({ item_id: item.id, value: posted === undefined || posted.trim() === '' ? null : posted });
    } else if (item.type === 'consent') {
      const shown = Number(fields[`term_version_${item.id}`]);
      items.push({ item_id: item.id, value: posted === 'true', term_version_id: Number.isSafeInteger(shown) && shown > 0 ? shown : (item.term_version_id ?? 0) });
    }
  }
  return items;
}

/** What a person reads beside an item for each refusal; the API's own message otherwise. */
function messageOf(e: FieldError): string {
  switch (e.code) {
    case 'field_value_missing':
      return 'Please fill this in.';
    case 'consent_required':
      return 'Please accept this to continue.';
    case 'consent_term_version_stale':
      return 'This text changed since the page was loaded: read the current version and tick the box again if you agree.';
    default:
      return e.message;
  }
}

/** The item an error is about: params.item_id when it names one, else the item at the pointer's index of what was sent. */
function itemOfError(e: FieldError, sent: SubmissionItemInput[]): number | undefined {
  const named = e.params?.item_id;
  if (typeof named === 'number') return named;
  const at = /^\/items\/(\d+)(?:\/|$)/.exec(e.pointer);
  return at ? sent[Number(at[1])]?.item_id : undefined;
}

/** A 422's errors by item ('' for those about no item). */
function errorsByItem(errors: FieldError[], sent: SubmissionItemInput[]): Map<number | '', string[]> {
  const out = new Map<number | '', string[]>();
  for (const e of errors) {
    const id = itemOfError(e, sent) ?? '';
    out.set(id, [...(out.get(id) ?? []), messageOf(e)]);
  }
  return out;
}

/** consent_identity_field_missing drawn on the page: beside each empty field that an accepted consent's channel needs. */
function identityErrors(form: Form, sent: SubmissionItemInput[]): Map<number | '', string[]> {
  const errors = new Map<number | '', string[]>();
  const value = (id: number) => sent.find((s) => s.item_id === id)?.value;
  for (const item of form.items) {
    if (item.type !== 'consent' || value(item.id) !== true) continue;
    const key = CHANNEL_FIELD[item.channel];
    const field = form.items.find((f) => f.type === 'field' && f.field_key === key);
    const message = `Needed for “${item.label ?? key}”: fill it in, or leave that box unticked.`;
    if (field && (value(field.id) === null || value(field.id) === undefined)) errors.set(field.id, [...(errors.get(field.id) ?? []), message]);
  }
  if (!errors.size) errors.set('', ['A box you ticked needs an address or phone number this form does not ask for.']);
  return errors;
}

export const formPageRoutes = [
  defineRoute<Record<string, never>, { public_token: string }>({
    ...common,
    method: 'get',
    operationId: 'showHostedForm',
    summary: 'The hosted form page',
    description:
      'The form drawn from its settings (title, header and footer texts, colours, logo, custom CSS) and its items in order, ' +
      'each consent item with the text of its term’s current version. 404 for an unknown token and for a deactivated or deleted form.',
    errors: [404],
    success: { status: 200, description: 'The page', contentType: 'text/html', schema: { type: 'string' } },
    handler: async ({ params, deps }, res) => {
      const found = await formOf(deps, params.public_token, res);
      if (found) sendPage(res, 200, formPage(await pageFormOf(found.tenant, deps, found.form), { values: {}, errors: new Map(), submissionKey: newSubmissionKey() }), IMG_SRC);
      return undefined;
    },
  }),
  defineRoute<Record<string, never>, { public_token: string }, Record<string, string>>({
    ...common,
    method: 'post',
    operationId: 'submitHostedForm',
    summary: 'Submit the hosted form (its page’s form)',
    description:
      'The answers as the page posts them (item_<id>, term_version_<id>), submitted with every rule of POST /v1/forms/{id}/submissions ' +
      'and stored with source form, the request’s address and user agent. Answers: the page saying the answers were received ' +
      '(status confirmed) or to check the mail (the form requires confirmation: pending); 422 the page again with each error beside its ' +
      'item; 429 past FORM_PAGE_RATE_PER_MINUTE submissions from one address (Retry-After). A filled honeypot field is answered like a ' +
      'success and nothing is stored. The page carries a submission key: posting the same page twice is one submission.',
    body: { type: 'object', description: 'The page’s form fields, as text.' },
    bodyType: 'form',
    bodyRequired: false,
    maxBodyBytes: MAX_FORM_BYTES,
    errors: [404, 409, 422, 429],
    success: { status: 200, description: 'The page: received, or check your mail', contentType: 'text/html', schema: { type: 'string' } },
    handler: async ({ params, body, deps, client }, res) => {
      try {
        await limiterOf(deps.pool, deps.config.formPage.ratePerMinute).consume(client.ip ?? 'unknown');
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) throw err;
        const seconds = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
        if (!wantsHtml(res)) throw new RateLimited(seconds);
        res.set('Retry-After', String(seconds));
        sendPage(res, 429, formRefusedPage(undefined, 'Please wait a moment', `Too many submissions from your address; try again in ${seconds} seconds`));
        return undefined;
      }
      const found = await formOf(deps, params.public_token, res);
      if (!found) return undefined;
      const { tenant, form } = found;
      const fields = body ?? {};
      if (fields[HONEYPOT]) {
        // A bot: it is told what a person would be told, so it learns nothing to adapt to.
        deps.logger.info({ instanceId: tenant.instanceId, formId: form.id, ip: client.ip }, 'hosted form: honeypot filled, nothing stored');
        sendPage(res, 200, formSentPage(form, form.requires_confirmation ? 'pending' : 'confirmed'), IMG_SRC);
        return undefined;
      }
      const key = SUBMISSION_KEY.test(fields.submission_key ?? '') ? fields.submission_key! : undefined;
      const items = submissionOf(form, fields);
      try {
        const result = await submitForm(tenant, deps.pool, deps.queue, form.id, { items }, {
          source: 'form',
          // Prefixed so a page's key is told apart from an integrator's own in the stored rows; meeting one would take guessing 128 random bits.
          ...(key ? { idempotencyKey: `page:${key}` } : {}),
          ...(client.ip ? { ipAddress: client.ip } : {}),
          ...(client.userAgent ? { userAgent: client.userAgent } : {}),
        });
        sendPage(res, 200, formSentPage(form, result.body.status), IMG_SRC);
      } catch (err) {
        if (!(err instanceof AppError) || err.status >= 500) throw err;
        const html = wantsHtml(res);
        if (err instanceof ValidationFailed || err.code === 'idempotency_key_reused') {
          if (!html) throw err;
          const errors = err instanceof ValidationFailed ? errorsByItem(err.errors, items) : new Map<number | '', string[]>();
          // The page was already sent once and these answers differ: the next send is a new submission.
          if (!(err instanceof ValidationFailed)) errors.set('', ['This page was already sent with other answers. Send again to send these too.']);
          const values = { ...fields };
          // A box ticked under a text that changed since is not kept ticked: the person reads the new one first.
          for (const e of err instanceof ValidationFailed ? err.errors : []) {
            const id = e.code === 'consent_term_version_stale' ? itemOfError(e, items) : undefined;
            if (id !== undefined) delete values[`item_${id}`];
          }
          const state: PageState = { values, errors, submissionKey: err instanceof ValidationFailed && key ? key : newSubmissionKey() };
          sendPage(res, 422, formPage(await pageFormOf(tenant, deps, form), state), IMG_SRC);
          return undefined;
        }
        if (!html) throw err;
        if (err.code === 'consent_identity_field_missing') {
          // A box ticked with the address (or phone) it is about left empty: the person can fix that.
          const state: PageState = { values: fields, errors: identityErrors(form, items), submissionKey: key ?? newSubmissionKey() };
          sendPage(res, 409, formPage(await pageFormOf(tenant, deps, form), state), IMG_SRC);
          return undefined;
        }
        // 404: deactivated since the page was drawn; 409: a form that cannot take this submission (its configuration).
        if (err.status === 404) sendLinkNotValid(res, 'This form does not exist or no longer takes answers');
        else sendPage(res, err.status, formRefusedPage(form, 'This form could not be sent', err.message), IMG_SRC);
      }
      return undefined;
    },
  }),
];
