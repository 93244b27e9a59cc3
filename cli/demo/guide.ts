/**
 * What the demo prints at the end: ready-to-run curl lines with the key filled in, one command a
 * line (test/cli-demo.test.ts runs each as printed), each after a comment saying what it shows.
 */

export interface GuideInput {
  base: string;
  slug: string;
  key: string;
  campaign: string;
  formId: number;
  /** The body of the submission the demo sent once under SIGNUP_IDEMPOTENCY_KEY. */
  signupBody: unknown;
  /** A contact whose double opt-in was confirmed, and the purpose it consented to. */
  confirmedContact: string;
  purposeId: number;
  /** None when the demo made no webhook (a service refusing private receivers, no --webhook-url). */
  webhookId?: number;
}

/** The Idempotency-Key of the printed submission: the demo sent it once, so the line answers 200 with that submission. */
export const SIGNUP_IDEMPOTENCY_KEY = 'cartero-demo-signup';

/** A single-quoted shell word (the JSON body holds no single quote, but a name might). */
const q = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

export function curlLines(g: GuideInput): Array<{ what: string; command: string }> {
  const auth = `-H ${q(`Authorization: Bearer ${g.key}`)} -H ${q(`X-Instance-Slug: ${g.slug}`)}`;
  const get = (path: string) => `curl -s ${auth} ${q(g.base + path)}`;
  return [
    { what: 'The campaign, mail by mail: status 3 sent, 5 deferred (softbounce*), 6 bounced (bounce*); opens and clicks counted', command: get(`/v1/mails?custom_group_code=${g.campaign}&page_size=100`) },
    { what: 'Opens grouped per recipient (add &exclude_machine=true to leave out the privacy proxy’s)', command: get('/v1/activities/opens?group_by=mail_id') },
    { what: 'Clicks one by one, link scanners’ included (add &exclude_machine=true to leave out those flagged machine-made)', command: get('/v1/activities/clicks?group_by=none') },
    { what: 'Delivered mails nobody opened yet (the form’s confirmation mails too)', command: get('/v1/activities/unopened') },
    { what: 'Opens as a CSV export (format=json streams JSON instead)', command: get('/v1/activities/opens/export?format=csv') },
    { what: 'Complaints (complaint*: the simulator sent a real ARF report back)', command: get('/v1/mail-complaints') },
    {
      what: `A form submission (sent once by the demo under this Idempotency-Key, so this answers 200 with it; a new key or address makes a new one, 201)`,
      command: `curl -s -X POST ${auth} -H ${q('Content-Type: application/json')} -H ${q(`Idempotency-Key: ${SIGNUP_IDEMPOTENCY_KEY}`)} -d ${q(JSON.stringify(g.signupBody))} ${q(`${g.base}/v1/forms/${g.formId}/submissions`)}`,
    },
    { what: `The consent verdict of a contact who confirmed the signup by its double opt-in link`, command: get(`/v1/consent-rules/resolve?contacts=${encodeURIComponent(g.confirmedContact)}&contact_types=email_address&channel=mail&purpose_ids=${g.purposeId}`) },
    ...(g.webhookId === undefined ? [] : [{ what: 'The webhook’s deliveries: every attempt, failures and retries included', command: get(`/v1/webhooks/${g.webhookId}/deliveries`) }]),
  ];
}

export function guideText(g: GuideInput): string {
  const lines = curlLines(g).flatMap(({ what, command }) => [`# ${what}`, command, '']);
  return [...lines, `# The interactive API reference (open it in a browser)`, `${g.base}/docs`, ''].join('\n');
}
