/**
 * `fecr send --wait` of one document in local mode (embedded SQLite, the embedded emulator), spawned as a user
 * would (node bin/fecr.js): wall time from spawn to exit with the verdict. A fresh HOME and data dir; the issuer
 * is registered first (not timed); the first send (emulator keys created) is reported apart; then `runs` sends
 * of distinct documents: median and p90. Needs `npm run build` first. Target: ≤ 1.5 s.
 * Usage: node --import tsx bench/send-wait.ts [runs=12]
 * BENCH_NO_MAIL=1: the document has no receptor e-mail (no mail rendered and written): the send and the verdict alone.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { makeTestIssuer } from '../test/helpers/issuer.js';

const bin = new URL('../bin/fecr.js', import.meta.url).pathname;
const runs = Number(process.argv[2] ?? 12);
const dir = mkdtempSync(join(os.tmpdir(), 'fecr-bench-send-'));
const env = { ...process.env, HOME: dir, FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1' };
// SEND_PROF=<dir>: the timed sends run under `node --cpu-prof` (one profile per send in <dir>).
const prof = process.env.SEND_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.SEND_PROF}`] : [];
const fecr = (args: string[], nodeArgs: string[] = []) => spawnSync(process.execPath, [...nodeArgs, bin, ...args], { env, cwd: dir, encoding: 'utf8' });

const fixture = JSON.parse(readFileSync(new URL('../fixtures/documents/01-fe-servicios-13.json', import.meta.url), 'utf8')) as Record<string, unknown>;
const noMail = process.env.BENCH_NO_MAIL === '1';
if (noMail) delete (fixture['receptor'] as Record<string, unknown>)['correoElectronico'];
writeFileSync(join(dir, 'issuer.json'), JSON.stringify(makeTestIssuer().issuer));
const reg = fecr(['emisor', 'register', 'issuer.json']);
if (reg.status !== 0) throw new Error(reg.stderr);

function sendOnce(n: number): number {
  writeFileSync(join(dir, 'doc.json'), JSON.stringify({ ...fixture, numeroReferencia: n }));
  const t = process.hrtime.bigint();
  const r = fecr(['send', 'doc.json', '--wait'], n > 1 ? prof : []);
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0 || !r.stdout.includes('aceptado')) throw new Error(`send --wait failed (${r.status}): ${r.stderr}`);
  return ms;
}

const first = sendOnce(1);
const xs = Array.from({ length: runs }, (_, i) => sendOnce(i + 2)).sort((a, b) => a - b);
const at = (q: number) => Math.round(xs[Math.min(xs.length - 1, Math.floor(q * xs.length))]!);
console.log(
  JSON.stringify(
    {
      machine: `${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, Node ${process.version}`,
      date: new Date().toISOString(),
      loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
      receptorMail: !noMail,
      firstSendMs: Math.round(first),
      runs,
      medianMs: at(0.5),
      p90Ms: at(0.9),
      targetMs: 1500,
    },
    null,
    2,
  ),
);
rmSync(dir, { recursive: true, force: true });
