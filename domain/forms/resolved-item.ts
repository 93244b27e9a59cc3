import type { FormConsentChannel, FormItemType } from './read.js';

// Its own module: the form definition (definition.ts) writes these items and the dataset rule
// (dataset-columns.ts) checks and aligns them, and definition.ts calls that rule.

/** An item resolved against the catalog and the terms, as it is written. */
export interface ResolvedItem {
  id?: number;
  type: FormItemType;
  fieldId: number | null;
  fieldKey: string | null;
  termId: number | null;
  channel: FormConsentChannel | null;
  label: string | null;
  text: string | null;
  required: boolean;
}
