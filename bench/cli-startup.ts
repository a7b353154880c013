/**
 * CLI start-up benchmark (`npm run bench:startup`): wall time of `node -e 0`, `fecr --version` and `fecr --help`,
 * spawned as a user would (node bin/fecr.js), interleaved run by run (this kind of VM drifts by ±15 % from one
 * minute to the next, so the three are measured in the same minutes), 30 rounds after 3 warm-up rounds; median
 * and p90 of each, and what `--help` adds to Node's own start (median of the per-round differences).
 * Needs `npm run build` first. Targets: `--help` ≤ 150 ms, and within 30 ms of `node -e 0` (issue 13).
 */
import { spawnSync } from 'node:child_process';
import os from 'node:os';

const bin = new URL('../bin/fecr.js', import.meta.url).pathname;
const ROUNDS = 30;
const WARMUP = 3;

function wall(args: string[]): number {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} failed: ${r.stderr}`);
  return Number(process.hrtime.bigint() - t) / 1e6;
}

const COMMANDS = {
  node: ['-e', '0'],
  version: [bin, '--version'],
  help: [bin, '--help'],
} as const;
type Name = keyof typeof COMMANDS;

const times: Record<Name, number[]> = { node: [], version: [], help: [] };
for (let round = 0; round < WARMUP + ROUNDS; round++) {
  // The order changes each round, so no command always runs right after another.
  const order: Name[] = round % 2 === 0 ? ['node', 'version', 'help'] : ['help', 'version', 'node'];
  for (const name of order) {
    const ms = wall([...COMMANDS[name]]);
    if (round >= WARMUP) times[name].push(ms);
  }
}

const round1 = (x: number) => Math.round(x * 10) / 10;
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};
const stats = (xs: number[]) => ({ medianMs: round1(quantile(xs, 0.5)), p90Ms: round1(quantile(xs, 0.9)) });
const over = times.help.map((h, i) => h - times.node[i]!);

console.log(
  JSON.stringify(
    {
      machine: `${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, Node ${process.version}`,
      date: new Date().toISOString(),
      rounds: ROUNDS,
      nodeEmptyScript: stats(times.node),
      version: stats(times.version),
      help: stats(times.help),
      helpOverNode: { medianMs: round1(quantile(over, 0.5)), p90Ms: round1(quantile(over, 0.9)), targetMs: 30 },
      targetMs: 150,
    },
    null,
    2,
  ),
);
