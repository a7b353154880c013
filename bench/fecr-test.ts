/**
 * `fecr test` against `fecr batch --wait` on the same bodies (issue 28): N FE bodies (default 200, two lines each,
 * without receptor e-mail so that neither command renders mails) in one JSONL file, and the same bodies as a folder of
 * N .json files. Each command runs as a child process of the built CLI (`node bin/fecr.js`), alternately, R times
 * (default 3):
 *   - `fecr batch bodies.jsonl --wait` on a local profile whose data dir has the test issuer registered beforehand
 *     (not timed) and is fresh at each run;
 *   - `fecr test bodies.jsonl` and `fecr test bodies/`: the throwaway profile, its data dir, the test issuer (a
 *     generated .p12) and the run, all timed.
 * Wall time from spawn to exit, and the child's CPU time (user + sys); per document = time / N; the ratio is fecr
 * test's median over batch's. Target: ≤ 1.5.
 * Needs `npm run build` first.   Usage: node --import tsx bench/fecr-test.ts [documents] [runs]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { makeTestIssuer } from '../test/helpers/issuer.js';

const bin = new URL('../bin/fecr.js', import.meta.url).pathname;
const docs = Number(process.argv[2] ?? 200);
const runs = Number(process.argv[3] ?? 3);
const dir = mkdtempSync(join(os.tmpdir(), 'fecr-bench-test-'));
const baseEnv = { ...process.env, HOME: dir, FECR_NO_KEYCHAIN: '1' };
for (const k of Object.keys(baseEnv)) if ((k.startsWith('FECR_') && k !== 'FECR_NO_KEYCHAIN') || k.startsWith('XDG_')) delete baseEnv[k as keyof typeof baseEnv];

function body(n: number): Record<string, unknown> {
  return {
    emisor: '3101123456',
    numeroReferencia: n,
    codigoActividad: '6201.0',
    tipoDoc: '1',
    fechaEmision: '2026-03-02T09:15:00-06:00',
    receptor: { nombre: 'DISTRIBUIDORA EL CAFETAL LIMITADA', identificacion: { tipo: '02', numero: '3101987654' } },
    detalleServicio: [
      { codigo: '8311200000000', detalle: 'Consultoría en gestión comercial', cantidad: 1 + (n % 5), unidadMedida: 'h', precioUnitario: '50000', ...(n % 3 === 0 ? { descuento: '1000', codigoDescuento: '07' } : {}), impuesto: [{ codigo: '01', codigoTarifa: '08' }] },
      { codigo: '4781400000000', detalle: 'Licencia de software', cantidad: 1 + (n % 7), unidadMedida: 'Unid', precioUnitario: '1250.50', impuesto: [{ codigo: '01', codigoTarifa: '08' }] },
    ],
    resumenFactura: { codigoTipoMoneda: { codigoMoneda: 'CRC' }, mediosPago: [{ tipoMedioPago: '04' }] },
  };
}

const bodies = Array.from({ length: docs }, (_, i) => body(i + 1));
writeFileSync(join(dir, 'bodies.jsonl'), bodies.map((b) => JSON.stringify(b)).join('\n') + '\n');
mkdirSync(join(dir, 'bodies'));
bodies.forEach((b, i) => writeFileSync(join(dir, 'bodies', `${String(i + 1).padStart(4, '0')}.json`), JSON.stringify(b, null, 2)));
const issuer = makeTestIssuer().issuer;
writeFileSync(join(dir, 'issuer.json'), JSON.stringify(issuer));

/** Wall seconds from spawn to exit, and the child's CPU seconds (user + sys, from /usr/bin/time: less sensitive to a busy machine). */
function timed(args: string[], env: NodeJS.ProcessEnv): { seconds: number; cpu: number; code: number | null; stderr: string; stdout: string } {
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', process.execPath, bin, ...args], { env, cwd: dir, encoding: 'utf8', maxBuffer: 1 << 30 });
  const m = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr);
  return { seconds: Number(process.hrtime.bigint() - t0) / 1e9, cpu: m ? Number(m[1]) + Number(m[2]) : NaN, code: r.status, stderr: r.stderr, stdout: r.stdout };
}

interface Timing {
  seconds: number;
  cpu: number;
}

function batchRun(i: number): Timing {
  const data = join(dir, `batch-data-${i}`);
  const env = { ...baseEnv, FECR_DATA_DIR: data };
  const reg = spawnSync(process.execPath, [bin, 'emisor', 'register', 'issuer.json'], { env, cwd: dir, encoding: 'utf8' });
  if (reg.status !== 0) throw new Error(reg.stderr);
  rmSync(join(dir, 'bodies.jsonl.journal'), { force: true });
  rmSync(join(dir, 'bodies.jsonl.results.jsonl'), { force: true });
  const r = timed(['batch', 'bodies.jsonl', '--wait', '--json'], env);
  const s = JSON.parse(r.stdout || '{}') as { aceptado?: number };
  if (r.code !== 0 || s.aceptado !== docs) throw new Error(`batch: exit ${r.code}, ${JSON.stringify(s)}\n${r.stderr}`);
  rmSync(data, { recursive: true, force: true });
  return r;
}

function testRun(path: string): Timing {
  const r = timed(['test', path, '--json'], baseEnv);
  const s = JSON.parse(r.stdout || '{}') as { passed?: number };
  if (r.code !== 0 || s.passed !== docs) throw new Error(`test ${path}: exit ${r.code}, passed ${s.passed}\n${r.stderr}`);
  return r;
}

const batch: Timing[] = [];
const testJsonl: Timing[] = [];
const testFolder: Timing[] = [];
const loads: number[] = [];
for (let i = 0; i < runs; i++) {
  batch.push(batchRun(i));
  testJsonl.push(testRun('bodies.jsonl'));
  testFolder.push(testRun('bodies'));
  loads.push(os.loadavg()[0]!);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const r2 = (x: number) => Math.round(x * 100) / 100;
const perDocMs = (s: number) => Math.round((s / docs) * 1000 * 10) / 10;
const of = (ts: Timing[], k: keyof Timing) => ts.map((t) => t[k]);
const figures = (k: keyof Timing) => ({
  runs: { batchWait: of(batch, k).map(r2), testJsonl: of(testJsonl, k).map(r2), testFolder: of(testFolder, k).map(r2) },
  medianPerDocumentMs: { batchWait: perDocMs(median(of(batch, k))), testJsonl: perDocMs(median(of(testJsonl, k))), testFolder: perDocMs(median(of(testFolder, k))) },
  ratio: { testJsonlOverBatch: r2(median(of(testJsonl, k)) / median(of(batch, k))), testFolderOverBatch: r2(median(of(testFolder, k)) / median(of(batch, k))) },
});
console.log(
  JSON.stringify(
    {
      machine: `${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, Node ${process.version}`,
      loadAverage1mAfterEachRound: loads.map((l) => r2(l)),
      date: new Date().toISOString(),
      documents: docs,
      wallSeconds: figures('seconds'),
      cpuSeconds: figures('cpu'),
      target: 1.5,
    },
    null,
    2,
  ),
);
rmSync(dir, { recursive: true, force: true });
