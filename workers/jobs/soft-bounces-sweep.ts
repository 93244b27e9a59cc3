import { instancesWithPendingSoftBounces } from '../../domain/restrictions/soft-bounces.js';
import { defineSchedule } from '../machinery/job.js';
import { enqueueSoftBounceCheck } from './soft-bounce-check.js';

/**
 * The minute sweep: enqueues the threshold job for every instance that still has unevaluated soft
 * bounces, which covers an enqueue lost between a commit and its send (a crash, a blip).
 */
export const softBouncesSweepJob = defineSchedule({
  name: 'restrictions.soft-bounces-sweep',
  schedule: '* * * * *',
  async handle({ boss, pool }) {
    for (const tenant of await instancesWithPendingSoftBounces(pool)) await enqueueSoftBounceCheck(boss, tenant.instanceId);
  },
});
