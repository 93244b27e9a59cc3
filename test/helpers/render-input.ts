import type { RenderInput } from '../../domain/mail/render.js';

export const RENDER_SECRET = 'test-secret-0123456789';
export const RENDER_PUBLIC_URL = 'https://mail.example.test';
export const RENDER_MAIL_ID = '01JABCDEFGHJKMNPQRSTVWXYZ0';

/** One recipient's render input for the pure renderer's tests: a plain tracked HTML mail, overridable. */
export function renderInput(over: Partial<RenderInput> = {}): RenderInput {
  return {
    mailId: RENDER_MAIL_ID,
    senderDomain: 'news.example.com',
    publicUrl: RENDER_PUBLIC_URL,
    secret: RENDER_SECRET,
    reportKey: { version: 3, secret: 'report-key' },
    from: { email: 'hello@news.example.com', name: 'News' },
    to: { email: 'ann@example.org', name: 'Ann', variables: {} },
    subject: 'Hello',
    html: '<p>Hello</p>',
    text: null,
    variables: {},
    replyTo: null,
    headers: {},
    attachments: [],
    trackOpens: true,
    trackClicks: true,
    ...over,
  };
}
