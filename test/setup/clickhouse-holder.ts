import { startEmbeddedClickHouse } from '../../analytics/embedded/server.js';

/**
 * A process of its own that starts the suite's ClickHouse and holds it for the run: the embedded
 * launcher dies with the process that started it (PDEATHSIG, analytics/embedded/launcher.c), and
 * before.ts exits before the first test file starts. Started by suite-clickhouse.ts, which gets
 * the server's URL and pid over IPC; SIGTERM or SIGINT (after.ts) stops the server, then this.
 *
 * Usage: node clickhouse-holder.js <data dir>
 */
const dir = process.argv[2];
if (!dir) throw new Error('usage: clickhouse-holder.js <data dir>');

const server = await startEmbeddedClickHouse({ dir, log: (m) => console.log(m) });
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await server.stop();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// Nothing else keeps this process alive once before.ts has gone (the server is unref'd).
setInterval(() => {}, 1 << 30);
process.send!({ url: server.url, pid: server.pid });
process.disconnect();
