/**
 * Summarise a V8 .cpuprofile (from bench/cpu-profiler.ts): where the samples fall, by self time,
 * per function and per package, so a benchmark's CPU cost can be attributed without DevTools.
 *
 *   node dist/bench/cpuprofile-summary.js /tmp/prof/web.1234.cpuprofile [topN]
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Which package (or part of Node, or of this project) a frame belongs to. */
function category(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith('(') ? functionName : '(native / V8 builtins)';
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return `project:${url.slice(dist + 6).split('/').slice(0, 2).join('/')}`;
  return url;
}

function main(): void {
  const file = process.argv[2];
  const top = Number(process.argv[3] ?? 25);
  if (!file) {
    console.error('usage: node dist/bench/cpuprofile-summary.js <file.cpuprofile> [topN]');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

  const totalUs = profile.endTime - profile.startTime;
  const idleUs = [...selfUs].filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)').reduce((s, [, us]) => s + us, 0);
  const busyUs = totalUs - idleUs;

  const byFunction = new Map<string, number>();
  const byCategory = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const f = byId.get(id)!.callFrame;
    if (f.functionName === '(idle)') continue;
    const where = f.url ? `${f.url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${f.lineNumber + 1}` : '';
    const key = `${f.functionName || '(anonymous)'} ${where}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    const c = category(f);
    byCategory.set(c, (byCategory.get(c) ?? 0) + us);
  }
  const pct = (us: number) => `${((100 * us) / busyUs).toFixed(1).padStart(5)} %`;
  const ms = (us: number) => `${(us / 1000).toFixed(0).padStart(7)} ms`;
  console.log(`${file}\nprofiled ${ms(totalUs)}, idle ${ms(idleUs)}, busy ${ms(busyUs)} (percentages below are of busy time)\n`);
  console.log('self time by package / area:');
  for (const [c, us] of [...byCategory].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(us)} ${ms(us)}  ${c}`);
  console.log(`\nself time by function (top ${top}):`);
  for (const [k, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(us)} ${ms(us)}  ${k}`);
}

main();
