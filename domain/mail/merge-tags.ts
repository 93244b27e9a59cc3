import { Liquid } from 'liquidjs';

/**
 * Merge tags ({{first_name}}) filled per recipient by a well-kept template engine. Two engines:
 * HTML output escapes every value (a recipient named <script> stays text), plain text and
 * subjects do not. Missing variables render empty, as integrators expect from Mailgun/SendGrid.
 * Parsed templates are cached: one message renders for up to 500 recipients.
 */
const common = { cache: 500, strictVariables: false, strictFilters: true, ownPropertyOnly: true } as const;
const htmlEngine = new Liquid({ ...common, outputEscape: 'escape' });
const textEngine = new Liquid({ ...common });

export type Variables = Record<string, unknown>;

export function renderHtml(template: string, variables: Variables): string {
  return htmlEngine.parseAndRenderSync(template, variables) as string;
}

export function renderText(template: string, variables: Variables): string {
  return textEngine.parseAndRenderSync(template, variables) as string;
}

/** Throws with a readable message when a template does not parse (a 422 at acceptance). */
export function checkTemplate(template: string): string | undefined {
  try {
    textEngine.parse(template);
    return undefined;
  } catch (err) {
    return (err as Error).message.split('\n')[0];
  }
}

/** Message variables, then the recipient's own (which win), then the recipient's address/name. */
export function recipientVariables(message: Variables, recipient: { email: string; name?: string | null; variables?: Variables }): Variables {
  return { ...message, ...(recipient.variables ?? {}), email: recipient.email, name: recipient.name ?? recipient.variables?.name ?? '' };
}
