import type { Finding } from '../findings.js';
import { isRecord, moduleContent, resolveNode } from '../format/nodes.js';
import { finding } from './finding.js';
import { eachModule, walkDocument } from './walk.js';
import { kindOfType } from '../format/nodes.js';

/**
 * Images: a missing alt text is a warning (every field the declaration marks `expect: 'alt'`:
 * image modules and social icons); an image module with no explicit width (image.width or the
 * editor's computedStyle.width) is a suggestion, since Outlook on Windows shows an image without
 * a width attribute at its natural size.
 */
export function checkImages(doc: unknown): Finding[] {
  const out: Finding[] = [];
  walkDocument(doc, {
    value({ node, decl, value, pointer }) {
      if (decl.expect !== 'alt') return;
      if (typeof value === 'string' && value.trim() !== '') return;
      const what = node.kind === 'image' ? 'image' : `${node.kind ?? node.name} icon`;
      out.push(finding('image_missing_alt', pointer, node.uuid, `${what} without alternative text (alt)`));
    },
  });
  eachModule(doc, ({ module, pointer, uuid }) => {
    if (kindOfType(module.type) !== 'image') return;
    const c = moduleContent('image', module.descriptor);
    if (!c) return;
    const width = resolveNode('image', c.content, 'image').width;
    const computed = isRecord(module.descriptor) ? resolveNode('descriptor.computedStyle', module.descriptor.computedStyle, 'image').width : undefined;
    if (hasValue(width) || hasValue(computed)) return;
    out.push(finding('image_missing_width', `${pointer}/descriptor/${c.key}`, uuid, 'image without an explicit width (image.width)'));
  });
  return out;
}

function hasValue(v: unknown): boolean {
  return (typeof v === 'number' && v > 0) || (typeof v === 'string' && v.trim() !== '' && v.trim() !== 'auto');
}
