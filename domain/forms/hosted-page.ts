import type { Pool } from '../../sql/pool.js';
import { readTerm } from '../consent/terms.js';
import { fieldsByKey } from '../fields/catalog.js';
import type { FieldDefinition } from '../fields/types.js';
import { withTenant, type Tenant } from '../tenancy/context.js';
import type { FormConsentChannel } from './read.js';

/**
 * What the hosted form page (api/pages/form-page.ts) draws besides the form as GET /v1/forms/{id}
 * shows it: each field item's catalog field (its type picks the input, its rules the input's
 * attributes) and each consent item's term version (its text is shown beside the box). Read
 * through the catalog's and the terms' own modules, in one tenant transaction.
 */


/**
 * An item as the hosted page reads it: what GET /v1/forms/{id} shows of it (a stored form's
 * items are these), or a definition's items not written yet (definition.ts draftForm, the
 * panel's preview), numbered by position.
 */
export type HostedItem =
  | { id: number; type: 'field'; field_key: string; label: string | null; required: boolean }
  | { id: number; type: 'consent'; term_id: number; term_version_id: number | null; channel: FormConsentChannel; label: string | null; required: boolean }
  | { id: number; type: 'separator' }
  | { id: number; type: 'text'; text: string };

export interface HostedTermVersion {
  name: string;
  version: string;
  body: string;
  documentUrl: string | null;
}

export interface HostedPageData {
  /** Catalog fields by field_key (absent: deleted from the catalog since). */
  fields: Map<string, FieldDefinition>;
  /** The current version of each consent item's term, by term id (absent: none current). */
  terms: Map<number, HostedTermVersion>;
}

export async function hostedPageData(tenant: Tenant, pool: Pool, items: readonly HostedItem[]): Promise<HostedPageData> {
  const keys = items.flatMap((i) => (i.type === 'field' ? [i.field_key] : []));
  const termIds = [...new Set(items.flatMap((i) => (i.type === 'consent' ? [i.term_id] : [])))];
  return withTenant(pool, tenant, async (c) => {
    const fields = keys.length ? await fieldsByKey(tenant, c, keys) : new Map<string, FieldDefinition>();
    const terms = new Map<number, HostedTermVersion>();
    for (const id of termIds) {
      const term = await readTerm(tenant, c, id);
      const current = term.versions.find((v) => v.is_current);
      if (current) terms.set(id, { name: term.name, version: current.version, body: current.body, documentUrl: current.document_url });
    }
    return { fields, terms };
  });
}
