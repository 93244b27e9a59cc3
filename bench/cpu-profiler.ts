/**
 * Benchmark-only preload: a V8 CPU profile of each service process, written when it exits.
 * Node 20 refuses `--cpu-prof` in NODE_OPTIONS, so `BENCH_CPU_PROF_DIR=/some/dir node
 * dist/bench/senders.js` adds `--import <this file>` to the service's NODE_OPTIONS instead.
 * Each process writes <dir>/<entry>.<pid>.cpuprofile (web.<pid>.cpuprofile for the web dyno),
 * readable by Chrome DevTools or `node dist/bench/cpuprofile-summary.js <file>`.
 * The in-thread inspector session answers synchronously, so this works in an 'exit' handler
 * (the service stops with process.exit()).
 */
import { Session } from 'node:inspector';
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

const dir = process.env.BENCH_CPU_PROF_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: Number(process.env.BENCH_CPU_PROF_INTERVAL_US ?? 500) });
  session.post('Profiler.start');
  process.on('exit', () => {
    session.post('Profiler.stop', (err, result) => {
      if (err || !result) return;
      mkdirSync(dir, { recursive: true });
      const entry = basename(process.argv[1] ?? 'node').replace(/\.js$/, '');
      writeFileSync(join(dir, `${entry}.${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
