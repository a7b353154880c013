/**
 * Reading `node --cpu-prof` profiles for the benchmarks (bench:service, bench:batch; issue 31): self time per
 * function and per package/area, over the whole run or over named windows of it (profile clock, microseconds).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The newest .cpuprofile in `dir` (or each of them with `all`: one per thread). */
export function profilesIn(dir: string, all = false): string[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(dir, f))
    .sort();
  return all ? files : files.slice(-1);
}

/** Self time per function and per package/area of the newest .cpuprofile in `dir` (every one with `all`), for each window. */
export function topFunctions(dir: string, windows: Record<string, [number, number]> = {}, all = false): string {
  const files = profilesIn(dir, all);
  if (files.length === 0) return 'no .cpuprofile written';
  return files.map((f) => topFunctionsOf(f, windows)).join('\n');
}

export function topFunctionsOf(file: string, windows: Record<string, [number, number]> = {}): string {
  interface Node {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
  }
  const prof = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number };
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const where = (url: string) => {
    const u = url.replace(/^file:\/\//, '');
    const nm = u.lastIndexOf('/node_modules/');
    if (nm >= 0) return u.slice(nm + 1);
    const d = u.indexOf('/dist/');
    return d >= 0 ? u.slice(d + 1) : u;
  };
  const areaOf = (u: string, fn: string) => {
    if (u.startsWith('node_modules/')) return u.split('/').slice(0, u.split('/')[1]?.startsWith('@') ? 3 : 2).join('/');
    if (u.startsWith('dist/')) return u.split('/').slice(0, 3).join('/');
    return u || fn;
  };
  const report: string[] = [`\nCPU profile: ${file}`];
  for (const [name, [from, to]] of Object.entries({ ...windows, whole: [0, Number.MAX_SAFE_INTEGER] as [number, number] })) {
    const self = new Map<string, number>();
    const area = new Map<string, number>();
    let total = 0;
    let t = prof.startTime;
    prof.samples.forEach((id, i) => {
      const dt = prof.timeDeltas[i] ?? 0;
      t += dt;
      if (t < from || t > to) return;
      const n = byId.get(id)!;
      const u = where(n.callFrame.url);
      const key = `${n.callFrame.functionName || '(anonymous)'} ${u}${u ? `:${n.callFrame.lineNumber + 1}` : ''}`;
      self.set(key, (self.get(key) ?? 0) + dt);
      const a = areaOf(u, n.callFrame.functionName);
      area.set(a, (area.get(a) ?? 0) + dt);
      total += dt;
    });
    const top = (m: Map<string, number>, k: number) =>
      [...m]
        .sort((a, b) => b[1] - a[1])
        .slice(0, k)
        .map(([key, us]) => `${((us / total) * 100).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(6)} ms  ${key}`)
        .join('\n');
    report.push(`== ${name}: ${(total / 1e6).toFixed(1)} s sampled ==\n-- top functions by self time --\n${top(self, 25)}\n-- by area --\n${top(area, 20)}`);
  }
  return report.join('\n');
}
