import type { Finding } from '../findings.js';
import { finding } from './finding.js';
import { walkDocument } from './walk.js';

/**
 * Vendor-prefixed CSS values (`text-align: -webkit-center`, which Beefree writes for some
 * blocks): MJML refuses them as enum values and most clients ignore them, so the renderer uses
 * the standard value (center); the warning says so. Declared style properties and enum fields
 * only.
 */
export const VENDOR_PREFIX = /^-(webkit|moz|ms|o)-/i;

/** The standard value a vendor-prefixed one stands for (`-webkit-center` → `center`). */
export function unprefixed(value: string): string {
  return value.trim().replace(VENDOR_PREFIX, '');
}

export function checkVendorCss(doc: unknown): Finding[] {
  const out: Finding[] = [];
  walkDocument(doc, {
    value({ node, field, decl, value, pointer }) {
      if (!(node.decl.css || decl.type === 'enum') || typeof value !== 'string' || !VENDOR_PREFIX.test(value.trim())) return;
      out.push(finding('css_vendor_prefix', pointer, node.uuid, `${field}: ${value} is vendor-prefixed; rendered as ${unprefixed(value)}`, { value, normalised: unprefixed(value) }));
    },
  });
  return out;
}
