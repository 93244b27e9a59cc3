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
  // Milliseconds of one render. A legitimate template at the tag bound (MAX_MERGE_TAGS) renders
  // in ~100 ms warm but over 400 ms on a first, cold render on a busy machine, which 200 refused;
  // the whole mail's render stays bounded by RENDER_MAX_MS.
  renderLimit: 1_000,
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

/**
 * Most merge tags (`{{ }}` and `{% %}` openings) one template may hold. liquidjs takes a
 * template's tokens from the front of one array (Array.prototype.shift), which costs time in
 * proportion to the tokens left once the array is large: 20,000 tags took 0.5 s to parse and
 * 200,000 (1 MB of `{{a}}`) 19 s, blocking the web process at acceptance and the worker at
 * render. 5,000 parse in tens of milliseconds, and a real template needs far fewer (a loop
 * repeats its block without repeating its tags).
 */
export const MAX_MERGE_TAGS = 5_000;

function tooManyTags(template: string): string | undefined {
  let count = 0;
  for (let at = template.indexOf('{'); at !== -1; at = template.indexOf('{', at + 1)) {
    const next = template.charCodeAt(at + 1);
    if (next !== 0x7b && next !== 0x25) continue; // `{{` or `{%`
    if (++count > MAX_MERGE_TAGS) return `more than ${MAX_MERGE_TAGS} merge tags ({{ }} and {% %}) in one template`;
    at++;
  }
  return undefined;
}

function checkedTemplate(template: string): string {
  const problem = tooManyTags(template);
  if (problem) throw new Error(problem);
  return template;
}

export function renderHtml(template: string, variables: Variables): string {
  return htmlEngine.parseAndRenderSync(checkedTemplate(template), variables) as string;
}

export function renderText(template: string, variables: Variables): string {
  return textEngine.parseAndRenderSync(checkedTemplate(template), variables) as string;
}

/** A readable message when a template does not parse (a 422 at acceptance), else undefined. */
export function checkTemplate(template: string): string | undefined {
  try {
    textEngine.parse(checkedTemplate(template));
    return undefined;
  } catch (err) {
    return (err as Error).message.split('\n')[0];
  }
}

/** Message variables, then the recipient's own (which win), then the recipient's address/name. */
export function recipientVariables(message: Variables, recipient: { email: string; name?: string | null; variables?: Variables }): Variables {
  return { ...message, ...(recipient.variables ?? {}), email: recipient.email, name: recipient.name ?? recipient.variables?.name ?? '' };
}
