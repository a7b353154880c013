/**
 * Issue 24's figures, old against new in the same minutes: `fecr validate` per document (a whole CLI run: start,
 * schema, rules, totals, XSD and now the catalogue and date checks) and the emulator's verdicts per second
 * (bench/emulator.ts of each tree: 1 000 ten-line invoices with every check on).
 * Usage: npx tsx bench/one-verdict.ts OLD_TREE [rounds=3] [validateRuns=15] [--no-emulator]
 * OLD_TREE is a checkout of the old commit with `dist/` built and node_modules (e.g. `git worktree add /tmp/old
 * <commit> && ln -s $PWD/node_modules /tmp/old/ && (cd /tmp/old && npm run build)`). Rounds alternate the order of
 * the trees; the figures are medians over the rounds, the ratio new/old of the medians.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';

const OLD = resolve(process.argv[2] ?? '');
const ROUNDS = Number(process.argv[3] ?? 3);
const VALIDATE_RUNS = Number(process.argv[4] ?? 15);
const NEW = resolve(new URL('..', import.meta.url).pathname);
if (!process.argv[2]) throw new Error('usage: npx tsx bench/one-verdict.ts OLD_TREE [rounds] [validateRuns]');

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** CPU ms of this process's reaped children (cutime + cstime of /proc/self/stat, in 10 ms ticks). */
function childrenCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
  return (f[13]! + f[14]!) * 10;
}

/** Median wall ms of `fecr validate FIXTURE` in a tree, each run a fresh process with its own HOME; and mean CPU ms. */
function validateMs(tree: string): { wall: number; cpu: number } {
  const home = mkdtempSync(join(os.tmpdir(), 'fecr-bench-validate-'));
  const env = { PATH: process.env.PATH ?? '', HOME: home };
  const times: number[] = [];
  const cpu0 = childrenCpuMs();
  for (let i = 0; i < VALIDATE_RUNS; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [join(tree, 'bin/fecr.js'), 'validate', join(tree, 'fixtures/documents/01-fe-servicios-13.json')], { env, encoding: 'utf8' });
    times.push(performance.now() - t0);
    if (r.status !== 0) throw new Error(`${tree}: validate exited ${r.status}: ${r.stdout}${r.stderr}`);
  }
  return { wall: median(times), cpu: (childrenCpuMs() - cpu0) / VALIDATE_RUNS };
}

/** bench/emulator.ts of a tree: steady verdicts/s and CPU ms per verdict. */
function emulator(tree: string): { verdictsPerSecond: number; cpuMsPerVerdict: number } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(tree, 'bench/emulator.ts'), '1000', '32'], { cwd: tree, encoding: 'utf8', maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`${tree}: bench/emulator.ts exited ${r.status}: ${r.stderr}`);
  const j = JSON.parse(r.stdout.slice(r.stdout.indexOf('{'))) as { verdictsPerSecondAfterFirstQuarter: number; aceptado: number; cpuMsPerVerdict?: { total: number } };
  if (j.aceptado !== 1000) throw new Error(`${tree}: ${j.aceptado} of 1000 aceptado`);
  return { verdictsPerSecond: j.verdictsPerSecondAfterFirstQuarter, cpuMsPerVerdict: j.cpuMsPerVerdict?.total ?? NaN };
}

const fresh = () => ({ validate: [] as number[], validateCpu: [] as number[], vps: [] as number[], cpu: [] as number[] });
const results = { old: fresh(), new: fresh() };
for (let round = 0; round < ROUNDS; round++) {
  const order: ('old' | 'new')[] = round % 2 ? ['new', 'old'] : ['old', 'new'];
  for (const which of order) {
    const tree = which === 'old' ? OLD : NEW;
    const v = validateMs(tree);
    results[which].validate.push(v.wall);
    results[which].validateCpu.push(v.cpu);
    const e = process.argv.includes('--no-emulator') ? { verdictsPerSecond: NaN, cpuMsPerVerdict: NaN } : emulator(tree);
    results[which].vps.push(e.verdictsPerSecond);
    results[which].cpu.push(e.cpuMsPerVerdict);
    console.error(`round ${round + 1} ${which}: validate ${v.wall.toFixed(0)} ms (CPU ${v.cpu.toFixed(0)} ms), ${e.verdictsPerSecond} verdicts/s, ${e.cpuMsPerVerdict} CPU ms/verdict`);
  }
}
const row = (name: string, o: number[], n: number[], unit: string) => {
  const mo = median(o);
  const mn = median(n);
  return { figure: name, old: `${mo.toFixed(1)} ${unit}`, new: `${mn.toFixed(1)} ${unit}`, ratio: +(mn / mo).toFixed(3), runs: { old: o.map((x) => +x.toFixed(1)), new: n.map((x) => +x.toFixed(1)) } };
};
console.log(
  JSON.stringify(
    {
      machine: `${os.cpus()[0]?.model} × ${os.cpus().length}, Node ${process.version}`,
      date: new Date().toISOString(),
      load1m: os.loadavg()[0],
      rows: [
        row('fecr validate per document (whole CLI run, median wall)', results.old.validate, results.new.validate, 'ms'),
        row('fecr validate per document (CPU of the process and its xmllint)', results.old.validateCpu, results.new.validateCpu, 'ms'),
        row('emulator verdicts/s (steady)', results.old.vps, results.new.vps, '/s'),
        row('emulator CPU per verdict (all processes)', results.old.cpu, results.new.cpu, 'ms'),
      ],
    },
    null,
    2,
  ),
);
