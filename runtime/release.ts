import { loadConfigOrExit } from '../config/config.js';
import { createLogger } from './logger.js';
import { runMigrations } from './migrations.js';
import { required } from './shutdown.js';

/** The release dyno: all migrations, idempotently, then exit. */
const config = loadConfigOrExit('release');
const logger = createLogger(config.logLevel, 'release');
runMigrations({
  databaseUrl: required('DATABASE_URL', config.databaseUrl),
  clickhouseUrl: required('CLICKHOUSE_URL', config.clickhouseUrl),
  send: config.send,
  sandboxDomain: config.domains.sandboxDomain,
  ...(config.clickhouseCluster ? { clickhouseCluster: { name: config.clickhouseCluster } } : {}),
}, logger).then(
  () => logger.info('release done'),
  (err) => {
    logger.error({ err }, `release failed: ${(err as Error).message}`);
    process.exit(1);
  },
);
