import type { Finding } from '../findings.js';
import { IGNORED_KINDS, KINDS, MODULE_TYPE_PREFIX, UNSUPPORTED_KINDS, kindOfType, moduleContent } from '../format/nodes.js';
import { finding } from './finding.js';
import { eachModule } from './walk.js';

/**
 * Module types: a type not of the published form `mailup-bee-newsletter-modules-<kind>` with a
 * known kind is invalid_document; a Beefree kind Cartero does not render is
 * essential_not_supported (params.kinds names every such kind in the document, so one item
 * tells the client all it has to remove); a module of a kind with content to show but without
 * its content key is a warning.
 */
export function checkModuleTypes(doc: unknown): Finding[] {
  const out: Finding[] = [];
  const unsupported: Array<{ kind: string; pointer: string; uuid: string | null }> = [];
  eachModule(doc, ({ module, pointer, uuid }) => {
    const type = module.type;
    if (typeof type !== 'string') return; // missing or not a string: the schema check reports it
    const kind = kindOfType(type);
    if (kind === undefined) {
      out.push(finding('module_type_invalid', `${pointer}/type`, uuid, `module type "${type}" is not of the form ${MODULE_TYPE_PREFIX}<kind>`, { type }));
    } else if (UNSUPPORTED_KINDS.includes(kind)) {
      unsupported.push({ kind, pointer: `${pointer}/type`, uuid });
    } else if (IGNORED_KINDS.includes(kind)) {
      // the editor's empty-column placeholder: nothing to render, nothing to say
    } else if (!Object.hasOwn(KINDS, kind)) {
      out.push(finding('module_type_invalid', `${pointer}/type`, uuid, `module kind "${kind}" is unknown`, { type }));
    } else if (hasContentToShow(kind) && moduleContent(kind, module.descriptor) === undefined && isObject(module.descriptor)) {
      out.push(
        finding('module_content_missing', `${pointer}/descriptor`, uuid, `${kind} module without descriptor.${KINDS[kind].content_key}: it shows nothing`, {
          content_key: KINDS[kind].content_key,
        }),
      );
    }
  });
  const kinds = [...new Set(unsupported.map((u) => u.kind))];
  for (const u of unsupported) {
    out.push(finding('module_not_supported', u.pointer, u.uuid, `the ${u.kind} module is not supported by Cartero's renderer`, { kinds }));
  }
  return out;
}

function isObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A kind whose content holds something to show (a text, a link, an image, a list of items), as
 * opposed to a divider or spacer whose content is only style and renders from defaults.
 */
function hasContentToShow(kind: string): boolean {
  const k = KINDS[kind];
  const content = k.nodes[k.content_key];
  return Object.values(content.fields).some((f) => f.is !== 'object');
}
