import { join } from 'node:path';
import { startEmbeddedClickHouse, type EmbeddedClickHouse } from '../analytics/embedded/server.js';
import { startEmbeddedClickHouseCluster, type EmbeddedClickHouseCluster } from '../analytics/embedded/cluster.js';
import { DEFAULT_DATABASE } from '../analytics/client.js';
import { postgresRunAs, startEmbeddedPostgres, type EmbeddedPostgres } from '../sql/embedded.js';
import { startMailboxSimulator, type MailboxSimulator } from '../smtp/simulator.js';
import { dataDirKeySecret } from '../domain/domains/key-encryption.js';
import { loadConfigOrExit } from '../config/config.js';
import { createLogger } from './logger.js';
import { runMigrations } from './migrations.js';
import { preferredPort } from '../config/ports.js';
import { DataDirModeError, PRIVATE_UMASK, secureDataDir } from '../config/data-dir.js';
import { secretFile } from '../config/secret-file.js';
import { readServices, writeServices, type ServicesFile } from '../config/services-file.js';
import { superviseDynos, type DynoSupervisor } from './dynos.js';
import { selfSignedCertificate } from '../smtp/submission/certificate.js';

/** The mailbox simulator's AUTH password (user `cartero`), generated once. */
const SIMULATOR_PASSWORD_FILE = 'mailbox-simulator.password';

/**
 * `npm start`: the embedded default. Postgres and ClickHouse under DATA_DIR unless DATABASE_URL /
 * CLICKHOUSE_URL name real ones, the mailbox simulator (DATA_DIR/mailbox) unless SMTP_URL names a
 * real relay, then migrations, then WEB_DYNOS web and WORKER_DYNOS worker dynos as cluster
 * workers of this process (the same entry points the Procfile runs; runtime/dynos.ts), each
 * restarted with backoff when it dies. On SIGINT/SIGTERM the dynos stop first, then the
 * simulator, then ClickHouse, then Postgres, so no writer outlives what it writes to.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit('start');
  const logger = createLogger(config.logLevel, 'start');
  // DATA_DIR private to this user before anything writes there (config/data-dir.ts): what an
  // earlier version left readable is tightened, said once; what cannot be is a refusal to start.
  try {
    const { tightened } = secureDataDir(config.dataDir, { traverseGid: config.databaseUrl ? undefined : postgresRunAs().gid });
    if (tightened) {
      logger.warn(
        { data_dir: config.dataDir, tightened },
        `DATA_DIR: ${tightened} ${tightened === 1 ? 'entry' : 'entries'} that other local users could read or write (left by an earlier version) made private to this user`,
      );
    }
  } catch (err) {
    if (!(err instanceof DataDirModeError)) throw err;
    process.stderr.write(`cartero start: ${err.message}\n`);
    process.exit(1);
  }
  // And so is everything written from here on by this process and those it starts: ClickHouse's
  // parts and log, the simulator's mails, the dynos' files (Postgres sets its own, also 0700/0600).
  process.umask(PRIVATE_UMASK);
  const recorded = readServices(config.dataDir);
  const stops: Array<() => Promise<void>> = [];
  let shuttingDown = false;
  let dynos: DynoSupervisor | undefined;

  const shutdown = async (code: number) => {
    if (shuttingDown) return;
    shuttingDown = true;
    await dynos?.stop();
    for (const stop of stops.reverse()) await stop().catch((err) => logger.error({ err }, 'stop failed'));
    logger.info('stopped');
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));

  let pgServer: EmbeddedPostgres | undefined;
  let chServer: EmbeddedClickHouse | undefined;
  // CLICKHOUSE_SHARDS > 1: an embedded cluster, whose shard 1 serves the dynos (chServer).
  let chCluster: EmbeddedClickHouseCluster | undefined;
  let simulator: MailboxSimulator | undefined;
  let inboundPort = 0;
  let submissionPort = 0;
  // Every port this process picks for its services and dynos, so no two of them get the same one.
  const picked = new Set<number>(
    [config.port, config.inboundSmtpPort, config.internalPort, config.submission.port, config.submission.tlsPort].filter((p): p is number => p !== undefined),
  );
  try {
    if (!config.databaseUrl) {
      pgServer = await startEmbeddedPostgres({ dir: join(config.dataDir, 'postgres'), port: await preferredPort(recorded.postgres?.port, picked) });
      stops.push(pgServer.stop);
      logger.info({ port: pgServer.port, adopted: pgServer.adopted }, 'embedded postgres ready');
    }
    if (!config.clickhouseUrl && config.clickhouseShards > 1) {
      chCluster = await startEmbeddedClickHouseCluster({
        dir: join(config.dataDir, 'clickhouse-shards'),
        shards: config.clickhouseShards,
        ports: recorded.clickhouse_shards?.map((s) => ({ http: s.port, tcp: s.tcp_port })),
        taken: picked,
        log: (m) => logger.debug(m),
      });
      stops.push(chCluster.stop);
      chServer = chCluster.shards[0];
      logger.info({ cluster: chCluster.name, ports: chCluster.shards.map((s) => s.port) }, 'embedded clickhouse cluster ready');
    } else if (!config.clickhouseUrl) {
      chServer = await startEmbeddedClickHouse({
        dir: join(config.dataDir, 'clickhouse'),
        port: await preferredPort(recorded.clickhouse?.port, picked),
        log: (m) => logger.debug(m),
      });
      stops.push(chServer.stop);
      logger.info({ port: chServer.port }, 'embedded clickhouse ready');
    }
    // The worker's listener for bounces and complaints: the simulator reports to it, as remote
    // MTAs and feedback loops report to a real deployment's MX.
    inboundPort = config.inboundSmtpPort ?? (await preferredPort(recorded.inbound_smtp?.port, picked));
    // The worker's submission listener, for programs that send over SMTP (docs/sending.md, Send over SMTP).
    submissionPort = config.submission.port ?? (await preferredPort(recorded.submission_smtp?.port, picked));
    if (!config.smtpUrl) {
      simulator = await startMailboxSimulator({
        dir: join(config.dataDir, 'mailbox'),
        port: await preferredPort(recorded.smtp?.port, picked),
        inboundUrl: `smtp://127.0.0.1:${inboundPort}`,
        // Only the service may write into the mailbox: AUTH with a password made once (docs/operations.md).
        auth: { user: 'cartero', pass: secretFile(join(config.dataDir, SIMULATOR_PASSWORD_FILE)) },
        log: (m) => logger.debug(m),
      });
      stops.push(simulator.stop);
      logger.info({ url: simulator.where, mailbox: simulator.dir }, 'mailbox simulator ready');
    }
  } catch (err) {
    logger.error({ err }, 'could not start the embedded services');
    return shutdown(1);
  }
  const databaseUrl = config.databaseUrl ?? pgServer!.url;
  const clickhouseUrl = config.clickhouseUrl ?? `${chServer!.url}/${DEFAULT_DATABASE}`;
  const smtpUrl = config.smtpUrl ?? simulator!.url;
  // Its certificate: the operator's files, else a self-signed one made once into DATA_DIR.
  const { tlsCertFile, tlsKeyFile } = config.submission;
  const selfSigned = tlsCertFile && tlsKeyFile ? undefined : selfSignedCertificate(config.dataDir);
  // Cluster mode: the embedded cluster (its DDL run node by node: no Keeper), else CLICKHOUSE_CLUSTER's (ON CLUSTER).
  const clickhouseCluster = chCluster
    ? { name: chCluster.name, nodes: chCluster.shards.map((s) => `${s.url}/${DEFAULT_DATABASE}`) }
    : config.clickhouseCluster
      ? { name: config.clickhouseCluster }
      : undefined;
  const url = `http://localhost:${config.port}`;
  // /readyz and /metrics on loopback only, on a port of their own (api/internal.ts).
  const internalPort = config.internalPort ?? (await preferredPort(recorded.web_internal?.port, picked));
  const internalUrl = `http://${config.internalHost}:${internalPort}`;
  const services: ServicesFile = {
    ...(pgServer ? { postgres: { port: pgServer.port, url: databaseUrl, pid: pgServer.pid } } : {}),
    ...(chServer ? { clickhouse: { port: chServer.port, url: clickhouseUrl, pid: chServer.pid, ...(chCluster ? { cluster: chCluster.name } : {}) } } : {}),
    ...(chCluster
      ? { clickhouse_shards: chCluster.shards.map((s) => ({ port: s.port, tcp_port: s.tcpPort, url: `${s.url}/${DEFAULT_DATABASE}`, pid: s.pid })) }
      : {}),
    // The simulator runs inside this process.
    ...(simulator ? { smtp: { port: simulator.port, url: smtpUrl, pid: process.pid } } : {}),
    inbound_smtp: { port: inboundPort, url: `smtp://127.0.0.1:${inboundPort}` },
    submission_smtp: { port: submissionPort, url: `smtp://${config.submission.host}:${submissionPort}` },
    // This process: it holds the listening sockets the web dynos share.
    web: { port: config.port, url, pid: process.pid },
    web_internal: { port: internalPort, url: internalUrl },
    dynos: [],
  };
  writeServices(config.dataDir, services);

  try {
    await runMigrations({ databaseUrl, clickhouseUrl, send: config.send, sandboxDomain: config.domains.sandboxDomain, ...(clickhouseCluster ? { clickhouseCluster } : {}) }, logger);
  } catch (err) {
    logger.error({ err }, `migrations failed: ${(err as Error).message}`);
    return shutdown(1);
  }

  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    CLICKHOUSE_URL: clickhouseUrl,
    ...(clickhouseCluster ? { CLICKHOUSE_CLUSTER: clickhouseCluster.name } : {}),
    SMTP_URL: smtpUrl,
    PORT: String(config.port),
    DATA_DIR: config.dataDir,
    // The embedded default's DKIM key encryption key, generated into DATA_DIR once (docs/domains.md).
    DKIM_KEY_ENCRYPTION_KEY: config.domains.keyEncryptionKey ?? dataDirKeySecret(config.dataDir),
    INBOUND_SMTP_PORT: String(inboundPort),
    SUBMISSION_PORT: String(submissionPort),
    ...(selfSigned ? { SUBMISSION_TLS_CERT_FILE: selfSigned.file, SUBMISSION_TLS_KEY_FILE: selfSigned.file } : {}),
    INTERNAL_PORT: String(internalPort),
    // WEBHOOK_ALLOW_PRIVATE is left as the operator set it (default false): the embedded default
    // runs Postgres, ClickHouse and SMTP on loopback, so a tenant's webhook must not reach there.
  };
  // A stop asked for during the migrations: nothing to fork.
  if (shuttingDown) return;
  dynos = superviseDynos({
    counts: config.dynos,
    env,
    logger,
    // Kept current on every fork and exit, so an operator (or a check) finds each dyno's pid.
    onChange: (list) => {
      try {
        writeServices(config.dataDir, { ...services, dynos: list });
      } catch (err) {
        // A full disk must not take the supervisor down with the file.
        logger.error({ err }, 'could not rewrite services.json');
      }
    },
  });

  // The banner waits for a web dyno to answer, without a deadline: a web dyno that fails to start
  // is restarted with backoff (its own log line says why), so waiting is all there is to do.
  const waitingSince = Date.now();
  let warnedAt = waitingSince;
  for (;;) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      /* not listening yet */
    }
    if (shuttingDown) return;
    if (Date.now() - warnedAt > 30_000) {
      warnedAt = Date.now();
      logger.warn(`no web dyno answers ${url}/healthz after ${Math.round((warnedAt - waitingSince) / 1000)} s; still waiting`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  process.stdout.write(
    `\nCartero is running at ${url}\n` +
      `  data: ${config.dataDir}\n` +
      `  readiness and metrics (this machine only): ${internalUrl}/readyz ${internalUrl}/metrics\n` +
      `  SMTP submission (STARTTLS, AUTH: instance slug + API key with mail:send): ${config.submission.host}:${submissionPort}\n` +
      (selfSigned ? `    its self-signed certificate: ${selfSigned.file}, SHA-256 ${selfSigned.fingerprint}\n` : '') +
      `  first steps (a domain, a sender, a key, a send): README.md's quickstart\n` +
      `  Ctrl-C stops it; the next start reuses the data.\n\n`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
