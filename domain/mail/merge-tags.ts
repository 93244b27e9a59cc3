import { Liquid } from 'liquidjs';

/**
 * Merge tags ({{first_name}}) filled per recipient by a well-kept template engine. Two engines:
 * HTML output escapes every value (a recipient named <script> stays text), plain text and
 * subjects do not. Missing variables render empty, as integrators expect from Mailgun/SendGrid.
 * Parsed templates are cached: one message renders for up to 500 recipients.
 *
 * Templates come from API clients, so the engine is closed to the machine: no file system
 * (an empty in-memory template set; include/render/layout are refused at parse time, so a send
 * using them is a 422 rather than a read of the server's files), and bounded work (a loop over
 * a huge range would otherwise block the event loop of the web or worker process).
 */
const common = {
  cache: 500,
  strictVariables: false,
  strictFilters: true,
  ownPropertyOnly: true,
  templates: {},
  parseLimit: 12 * 1024 * 1024,
  renderLimit: 200,
  memoryLimit: 64 * 1024 * 1024,
} as const;

function closedEngine(options: ConstructorParameters<typeof Liquid>[0]): Liquid {
  const engine = new Liquid(options);
  for (const tag of ['include', 'render', 'layout']) {
    engine.registerTag(tag, {
      parse() {
        throw new Error(`the {% ${tag} %} tag is not available in merge tags`);
      },
      *render() {},
    });
  }
  return engine;
}

const htmlEngine = closedEngine({ ...common, outputEscape: 'escape' });
const textEngine = closedEngine({ ...common });

export type Variables = Record<string, unknown>;

export function renderHtml(template: string, variables: Variables): string {
  return htmlEngine.parseAndRenderSync(template, variables) as string;
}

export function renderText(template: string, variables: Variables): string {
  return textEngine.parseAndRenderSync(template, variables) as string;
}

/** A readable message when a template does not parse (a 422 at acceptance), else undefined. */
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
