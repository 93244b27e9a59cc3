import { rollUpProviderCounts } from '../../analytics/deliverability/rollup.js';
import { defineSchedule } from '../machinery/job.js';

/**
 * Every minute (and at start): the per-provider counts of the buckets whose rows changed, kept
 * in ClickHouse's provider_counts (analytics/deliverability/rollup.ts), so the figures read a few
 * thousand kept rows instead of every mail (docs/deliverability.md, "How the figures stay fast").
 * Singleton, like every schedule; a failed run changes nothing (the figures count the stale
 * buckets live meanwhile) and the next minute tries again.
 */
export const deliverabilityRollupJob = defineSchedule({
  name: 'deliverability.rollup',
  schedule: '* * * * *',
  runAtStart: true,
  async handle({ clickhouse, logger }) {
    const run = await rollUpProviderCounts(clickhouse);
    if (run.buckets) logger.debug(run, 'deliverability counts kept');
    if (run.left) logger.info(run, 'deliverability counts: more stale buckets than one run counts; the next run goes on');
  },
});
