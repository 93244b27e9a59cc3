import { queuePolicy, type JobDefinition, type QueuePolicy, type QueueSettings } from '../machinery/job.js';
import { consentConfirmationMailJob } from './consent-confirmation-mail.js';
import { consentExpiryJob } from './consent-expiry.js';
import { deliverabilityAlertsJob } from './deliverability-alerts.js';
import { deliverabilityRollupJob } from './deliverability-rollup.js';
import { domainVerifyJob } from './domain-verify.js';
import { formDatasetFeedJob } from './form-dataset-feed.js';
import { formSubmissionMailJob } from './form-submission-mail.js';
import { heartbeatJob } from './heartbeat.js';
import { providerMxJob } from './provider-mx.js';
import { releaseOnHoldJob } from './release-onhold.js';
import { retentionJob } from './retention.js';
import { sendMailJob } from './send-mail/index.js';
import { softBouncesJob } from './soft-bounces.js';
import { softBouncesSweepJob } from './soft-bounces-sweep.js';
import { webhookDeliverJob } from './webhook-deliver.js';
import { webhookHousekeepingJob, webhookSweepJob } from './webhook-housekeeping.js';

/**
 * Every job of the service, read by the release step (workers/machinery/queue.ts creates each queue with its
 * policy) and by the worker (workers/index.ts registers each handler and schedule). Adding a job:
 * one module under workers/ exporting a defineJob, or a defineSchedule for a scheduled job
 * without payload (workers/machinery/job.ts), and one line here; when code outside workers/ enqueues it,
 * its name and payload type go in domain/job-queue.ts.
 */
export const JOBS: ReadonlyArray<JobDefinition<any>> = [
  heartbeatJob,
  releaseOnHoldJob,
  retentionJob,
  softBouncesJob,
  softBouncesSweepJob,
  sendMailJob,
  consentConfirmationMailJob,
  consentExpiryJob,
  formSubmissionMailJob,
  formDatasetFeedJob,
  domainVerifyJob,
  providerMxJob,
  deliverabilityAlertsJob,
  deliverabilityRollupJob,
  webhookDeliverJob,
  webhookHousekeepingJob,
  webhookSweepJob,
];

/** Each job's queue name and policy, as the release step creates them (settings: the configuration). */
export function queuePolicies(settings: QueueSettings): Array<QueuePolicy & { name: string }> {
  return JOBS.map((def) => ({ name: def.name, ...queuePolicy(def, settings) }));
}
