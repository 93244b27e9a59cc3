import type { Pool } from '../../sql/pool.js';
import { query } from '../../sql/pool.js';
import { SEND_MAIL_QUEUE, sendMailJobs, type JobQueue } from '../job-queue.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { MailStatus } from './status.js';

/**
 * Mails put on hold (status 7) because the monthly quota was used up go back to the send queue,
 * oldest first, as far as the quota now allows: after `cartero instance set-limits` raises it, or
 * when a new UTC month starts (the worker's minute sweep). The worker claims a quota unit again
 * when it sends, so releasing a few too many only puts the surplus back on hold.
 */
export async function releaseOnHold(tenant: Tenant, pool: Pool, queue: JobQueue, max = 1000): Promise<number> {
  return withTenant(pool, tenant, async (c) => {
    const { rows } = await c.query<{ mail_id: string }>(
      `WITH room AS (
         SELECT CASE WHEN i.monthly_quota IS NULL THEN $2::int
                     ELSE least($2::int, greatest(0, i.monthly_quota - coalesce(q.used, 0))) END AS n
           FROM instances i
           LEFT JOIN quota_usage q ON q.instance_id = i.id AND q.month = date_trunc('month', now() AT TIME ZONE 'UTC')::date
          WHERE i.id = $1
       ), picked AS (
         SELECT id FROM mails
          WHERE instance_id = $1 AND status = ${MailStatus.onhold}
          ORDER BY received_at, id
          LIMIT (SELECT n FROM room)
          FOR UPDATE SKIP LOCKED
       ), released AS (
         UPDATE mails m SET status = ${MailStatus.received}, updated_at = now()
           FROM picked WHERE m.id = picked.id
         RETURNING m.mail_id
       ), logged AS (
         INSERT INTO mail_logs (instance_id, mail_id, status, reason)
         SELECT $1, mail_id, ${MailStatus.received}, 'released_from_hold' FROM released
       )
       SELECT mail_id FROM released`,
      [tenant.instanceId, max],
    );
    await queue.insert(c, sendMailJobs(tenant.instanceId, rows.map((r) => r.mail_id)));
    return rows.length;
  });
}

/** Every instance with mails on hold (a service-level read, not tenant data). */
export async function instancesWithMailsOnHold(pool: Pool): Promise<Tenant[]> {
  const { rows } = await query<{ id: number; slug: string; tz: string | null }>(
    pool,
    `SELECT i.id, i.slug, i.tz FROM instances i
      WHERE i.enabled AND EXISTS (SELECT 1 FROM mails m WHERE m.instance_id = i.id AND m.status = ${MailStatus.onhold})`,
  );
  return rows.map((r) => ({ instanceId: r.id, slug: r.slug, tz: r.tz }));
}

/**
 * Mails that should be moving but have no send job left: a worker killed while a job was on its
 * last try, or a job whose runs went to retries held off a mail still at SMTP elsewhere
 * (workers/machinery/send-lease.ts), leaves that job failed and the mail at received/queued/deferred. Found by the
 * minute sweep after `staleMinutes` without a move, and given a new job (the worker's status
 * checks keep this from sending a mail twice once it has a recorded 250).
 */
export async function requeueStrandedMails(pool: Pool, queue: JobQueue, staleMinutes = 15, max = 1000): Promise<number> {
  const { rows } = await query<{ instance_id: number; slug: string; tz: string | null; mail_ids: string[] }>(
    pool,
    `SELECT i.id AS instance_id, i.slug, i.tz, array_agg(m.mail_id) AS mail_ids
       FROM (SELECT instance_id, mail_id FROM mails
              WHERE status IN (${MailStatus.received}, ${MailStatus.queued}, ${MailStatus.deferred})
                AND updated_at < now() - make_interval(mins => $1)
                AND NOT EXISTS (SELECT 1 FROM pgboss.job j
                                 WHERE j.name = $3 AND (j.data->'mail_ids' ? mails.mail_id OR j.data->>'mail_id' = mails.mail_id)
                                   AND j.state IN ('created', 'retry', 'active'))
              LIMIT $2) m
       JOIN instances i ON i.id = m.instance_id
      GROUP BY i.id`,
    [staleMinutes, max, SEND_MAIL_QUEUE],
  );
  let n = 0;
  for (const r of rows) {
    const tenant: Tenant = { instanceId: r.instance_id, slug: r.slug, tz: r.tz };
    await withTenant(pool, tenant, async (c) => {
      await c.query(
        `INSERT INTO mail_logs (instance_id, mail_id, status, reason, moved)
         SELECT instance_id, mail_id, status, 'requeued_without_job', false FROM mails WHERE instance_id = $1 AND mail_id = ANY($2)`,
        [tenant.instanceId, r.mail_ids],
      );
      await c.query('UPDATE mails SET updated_at = now() WHERE instance_id = $1 AND mail_id = ANY($2)', [tenant.instanceId, r.mail_ids]);
      await queue.insert(c, sendMailJobs(tenant.instanceId, r.mail_ids));
    });
    n += r.mail_ids.length;
  }
  return n;
}
