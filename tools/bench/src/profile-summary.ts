/**
 * Where a V8 CPU profile (`node --cpu-prof`) spent its time: self time by
 * function and by file, heaviest first.
 *
 *   node tools/bench/src/profile-summary.ts FILE.cpuprofile [TOP]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function summarizeProfile(profile: Profile, top = 25): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const f = byId.get(id)!.callFrame;
    const file =
      f.url.replace(/^file:\/\/\/work\/main\//, '').replace(/.*node_modules\//, 'nm:') ||
      '(native)';
    const fn = `${f.functionName || '(anonymous)'}  ${file}:${f.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    byFile.set(file, (byFile.get(file) ?? 0) + us);
    total += us;
  }
  const table = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([k, us]) =>
          `${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`,
      )
      .join('\n');
  return `total ${(total / 1000).toFixed(0)} ms\n\nby function (self):\n${table(byFunction)}\n\nby file (self):\n${table(byFile)}\n`;
}

if (import.meta.main) {
  const [file, top] = process.argv.slice(2);
  if (!file) throw new Error('usage: profile-summary.ts FILE.cpuprofile [TOP]');
  process.stdout.write(
    summarizeProfile(JSON.parse(readFileSync(file, 'utf8')) as Profile, Number(top ?? 25)),
  );
}
