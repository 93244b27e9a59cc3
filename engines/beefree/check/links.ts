import type { Finding } from '../findings.js';
import { finding } from './finding.js';
import { startTags } from './html-scan.js';
import { walkDocument } from './walk.js';

/**
 * Links, offline and by syntax only: a javascript:/vbscript:/data: link or image is an error
 * (in a link field, or in an href/src inside any HTML the document carries); a link without a
 * scheme (`www.example.com`, which clients resolve as a relative path) is a suggestion; a
 * button, social icon or menu item without a link is a warning. Merge tags (`{{url}}`,
 * `*|UNSUB|*`, `[unsubscribe]`, `%%link%%`) are filled at send time and are fine.
 */
export type LinkClass = 'empty' | 'merge_tag' | 'unsafe' | 'no_scheme' | 'ok';

/** Attributes whose value a client loads or follows. */
const LINK_ATTRIBUTES = new Set(['href', 'src', 'background', 'action', 'formaction', 'poster', 'xlink:href', 'lowsrc', 'dynsrc']);

/** Last labels that name a file rather than a top-level domain. */
const FILE_EXTENSIONS = new Set(['png', 'jpg', 'jpeg', 'gif', 'webp', 'svg', 'bmp', 'ico', 'html', 'htm', 'php', 'asp', 'aspx', 'jsp', 'pdf', 'css', 'js', 'json', 'txt', 'xml', 'zip', 'mp4', 'mov']);

export function classifyLink(raw: string): LinkClass {
  // What a browser does before reading the scheme: leading/trailing C0 controls and spaces go,
  // tabs and newlines anywhere go (so "java\tscript:" is javascript:).
  const v = trimControls(raw).replace(/[\t\n\r]/g, '');
  if (v === '') return 'empty';
  if (/^(javascript|vbscript|data):/i.test(v)) return 'unsafe';
  if (/^(\{\{|\{%|\*\||%%|\[)/.test(v)) return 'merge_tag';
  if (/^[a-z][a-z0-9+.-]*:/i.test(v)) return 'ok';
  if (/^www\./i.test(v)) return 'no_scheme';
  // example.com, shop.example.co/offer: a host name first (its last label letters, and not a
  // file name such as logo.png, which is a relative path).
  const host = /^[a-z0-9-]+(?:\.[a-z0-9-]+)*\.([a-z]{2,})(?=$|[/?#:])/i.exec(v);
  if (host && !FILE_EXTENSIONS.has(host[1].toLowerCase())) return 'no_scheme';
  return 'ok';
}

export function checkLinks(doc: unknown): Finding[] {
  const out: Finding[] = [];
  const one = (url: string, pointer: string, uuid: string | null, where: string) => {
    const c = classifyLink(url);
    if (c === 'unsafe') {
      const scheme = trimControls(url).replace(/[\t\n\r]/g, '').split(':')[0].toLowerCase();
      out.push(finding('unsafe_link', pointer, uuid, `${where} uses the ${scheme}: scheme, which is not allowed`, { scheme }));
    } else if (c === 'no_scheme') {
      out.push(finding('link_without_scheme', pointer, uuid, `${where} "${url}" has no scheme; write https://${url.trim()}`, { url }));
    }
  };
  walkDocument(doc, {
    value({ node, decl, value, pointer }) {
      if (decl.type === 'url' || decl.type === 'image_url') {
        if (typeof value === 'string') one(value, pointer, node.uuid, decl.type === 'url' ? 'the link' : 'the image address');
        if (decl.expect === 'link' && (typeof value !== 'string' || isNoLink(value))) {
          out.push(finding('link_missing', pointer, node.uuid, `${node.kind ?? node.name} without a link`));
        }
      } else if (decl.type === 'html' && typeof value === 'string' && value !== '') {
        for (const tag of startTags(value)) {
          for (const a of tag.attributes) {
            if (LINK_ATTRIBUTES.has(a.name)) one(a.value, pointer, node.uuid, `<${tag.name} ${a.name}> in the HTML`);
          }
        }
      }
    },
  });
  return out;
}

function isNoLink(v: string): boolean {
  const t = v.trim();
  return t === '' || t === '#';
}

/** Without leading and trailing C0 controls and spaces (by hand: a `[...]+$` pattern backtracks quadratically). */
function trimControls(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && s.charCodeAt(a) <= 0x20) a++;
  while (b > a && s.charCodeAt(b - 1) <= 0x20) b--;
  return s.slice(a, b);
}
