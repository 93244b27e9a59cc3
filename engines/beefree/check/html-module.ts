import type { Finding } from '../findings.js';
import { moduleContent, kindOfType } from '../format/nodes.js';
import { finding } from './finding.js';
import { startTags } from './html-scan.js';
import { eachModule } from './walk.js';

/**
 * An html module with <script> or event-handler attributes (onclick, onload...): mail clients
 * never run them and many filters score them as hostile, so the renderer removes them; the
 * warning says the output differs from the input.
 */
export function checkHtmlModules(doc: unknown): Finding[] {
  const out: Finding[] = [];
  eachModule(doc, ({ module, pointer, uuid }) => {
    if (kindOfType(module.type) !== 'html') return;
    const c = moduleContent('html', module.descriptor);
    const html = c?.content.html;
    if (typeof html !== 'string') return;
    const tags = startTags(html);
    const scripts = tags.filter((t) => t.name === 'script').length;
    const handlers = [...new Set(tags.flatMap((t) => t.attributes.filter((a) => /^on[a-z]/.test(a.name)).map((a) => a.name)))];
    if (scripts === 0 && handlers.length === 0) return;
    const what = [scripts ? `${scripts} <script> element(s)` : '', handlers.length ? `event handler attribute(s) ${handlers.join(', ')}` : ''].filter(Boolean).join(' and ');
    out.push(finding('html_module_script', `${pointer}/descriptor/${c!.key}/html`, uuid, `the html module has ${what}; they are removed from the HTML`, { scripts, handlers }));
  });
  return out;
}
