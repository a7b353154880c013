/**
 * CLI start-up benchmark (`npm run bench:startup`): wall time of `fecr --version` and `fecr --help`,
 * spawned as a user would (node bin/fecr.js), 20 runs each after 3 warm-ups; median and p90.
 * Needs `npm run build` first. Target: ≤ 150 ms.
 */
import { spawnSync } from 'node:child_process';
import os from 'node:os';

const bin = new URL('../bin/fecr.js', import.meta.url).pathname;

function wall(args: string[]): number {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`fecr ${args.join(' ')} failed: ${r.stderr}`);
  return Number(process.hrtime.bigint() - t) / 1e6;
}

function stats(args: string[]): { medianMs: number; p90Ms: number } {
  for (let i = 0; i < 3; i++) wall(args);
  const xs = Array.from({ length: 20 }, () => wall(args)).sort((a, b) => a - b);
  return { medianMs: Math.round(xs[10]! * 10) / 10, p90Ms: Math.round(xs[18]! * 10) / 10 };
}

const bare = (() => {
  const xs = Array.from({ length: 10 }, () => {
    const t = process.hrtime.bigint();
    spawnSync(process.execPath, ['-e', '0']);
    return Number(process.hrtime.bigint() - t) / 1e6;
  }).sort((a, b) => a - b);
  return Math.round(xs[5]! * 10) / 10;
})();

console.log(
  JSON.stringify(
    {
      machine: `${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, Node ${process.version}`,
      date: new Date().toISOString(),
      nodeEmptyScriptMs: bare,
      version: stats(['--version']),
      help: stats(['--help']),
      targetMs: 150,
    },
    null,
    2,
  ),
);
