import type { Logger } from 'pino';
import type { RenderLimits } from '../../../config/defaults.js';
import type { SendSettings } from '../../../config/config.js';
import type { KeyRing } from '../../../domain/domains/key-encryption.js';
import type { SmtpTransport } from '../../../smtp/transport.js';
import type { Pool } from '../../../sql/pool.js';
import type { SendLease } from '../../machinery/send-lease.js';
import type { MailRenderer } from './render-threads.js';

/** What the send worker's steps take from the process (workers/jobs/send-mail/index.ts builds it from the configuration). */
export interface SendMailDeps {
  pool: Pool;
  smtp: SmtpTransport;
  /** PUBLIC_URL: base of tracking and unsubscribe links. */
  publicUrl: string;
  logger: Logger;
  /** This process's mails at SMTP, published for the other runs' transaction A. */
  lease: SendLease;
  /** SEND_BATCH_SIZE and SEND_CONCURRENCY; SEND_RETRY_LIMIT and SEND_RETRY_DELAY_SECONDS, a deferred mail's tries and their schedule. */
  settings: Pick<SendSettings, 'batchSize' | 'concurrency' | 'retryLimit' | 'retryDelaySeconds'>;
  /** RENDER_MAX_BODY_BYTES and RENDER_MAX_MS. */
  render: RenderLimits;
  /** The process's render threads (RENDER_THREADS). */
  renderer: MailRenderer;
  /** TRACKING_SECRET, when the operator sets it (domain/tracking/secret.ts). */
  trackingSecret: string | undefined;
  /**
   * DKIM: the key ring that opens the domains' private keys (called only when a batch has a
   * domain with a key), and RETURN_PATH_SUBDOMAIN, the host of the VERP return path under the
   * sender domain.
   */
  dkim: { ring: () => KeyRing; returnPathSubdomain: string };
}
