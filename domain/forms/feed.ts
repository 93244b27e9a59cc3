import type { Pool } from '../../sql/pool.js';
import { addContact, updateExistingContact } from '../datasets/contacts.js';
import { AppError } from '../errors.js';
import type { Tenant } from '../tenancy/context.js';
import { readSubmissionForJobs } from './confirm.js';

/**
 * A confirmed submission feeds its form's dataset (workers/jobs/form-dataset-feed.ts): the answers
 * of the columns the dataset declares (a field the dataset does not declare stays in the
 * submission only), checked as POST /v1/datasets/{id}/contacts checks a contact. A registration
 * form upserts by the identifier (domain/datasets/contacts.ts addContact: a new contact, or the
 * answers merged into the existing one); an update form updates an existing contact only.
 * Running it again changes nothing (the upsert leaves equal values alone).
 */
export type FeedOutcome =
  | { outcome: 'created' | 'updated' | 'unchanged' }
  | { outcome: 'skipped'; reason: 'submission_not_found' | 'not_confirmed' | 'no_dataset' | 'contact_not_found' }
  | { outcome: 'refused'; code: string; detail: string };

export async function feedDataset(tenant: Tenant, pool: Pool, submissionId: number): Promise<FeedOutcome> {
  const s = await readSubmissionForJobs(tenant, pool, submissionId);
  if (!s) return { outcome: 'skipped', reason: 'submission_not_found' };
  if (s.status !== 'confirmed') return { outcome: 'skipped', reason: 'not_confirmed' };
  if (s.dataset_id === null) return { outcome: 'skipped', reason: 'no_dataset' };
  // Only the dataset's columns: a field it does not declare stays in the submission.
  const opts = { declaredOnly: true };
  try {
    if (s.form_type === 'update') {
      const done = await updateExistingContact(tenant, pool, s.dataset_id, s.values, opts);
      return done === 'not_found' ? { outcome: 'skipped', reason: 'contact_not_found' } : { outcome: done };
    }
    const { status } = await addContact(tenant, pool, s.dataset_id, s.values, opts);
    return { outcome: status === 201 ? 'created' : 'updated' };
  } catch (err) {
    if (err instanceof AppError && (err.status === 409 || err.status === 422)) return { outcome: 'refused', code: err.code, detail: err.message };
    throw err;
  }
}
