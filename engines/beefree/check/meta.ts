import type { Finding } from '../findings.js';
import { finding } from './finding.js';

/**
 * The template's own subject and preheader (not the document's page.head.meta, which is the
 * editor's copy): suggestions when missing, since a send needs a subject and inbox previews
 * show the preheader. About the template, not a node, so uuid null and pointer ''.
 */
export function checkMeta(meta: { subject: string | null; preheader: string | null }): Finding[] {
  const out: Finding[] = [];
  if (!meta.subject || meta.subject.trim() === '') out.push(finding('subject_missing', '', null, 'the template has no subject', { field: 'subject' }));
  if (!meta.preheader || meta.preheader.trim() === '') {
    out.push(finding('preheader_missing', '', null, 'the template has no preheader (the preview text inboxes show)', { field: 'preheader' }));
  }
  return out;
}
