/**
 * Batch benchmark: generates a 10,000-row CSV (5,000 two-line FE documents), registers the test issuer in a fresh
 * local data dir, then runs `node bin/fecr.js batch FILE.csv --wait` as a child process under /usr/bin/time -v:
 * wall time until the last verdict (the batch waits for every one) and the child's peak RSS; counts the aceptado
 * verdicts and distinct claves in the results file.
 * Needs `npm run build` first. Targets: ≤ 40 s, ≤ 260 MB (issue 14).   Usage: node --import tsx bench/batch.ts [documents]
 * Every document has a receptor e-mail, so the batch then writes one mail (PDF and all) per document to the data
 * dir's outbox after the last verdict: the time of the last verdict (the results file's last write) and the exit are
 * both reported. BENCH_NO_MAIL=1: no receptor e-mail (the batch as it was before mails existed).
 * The floor (issue 31, bench/floor.ts) of the same documents is measured in the same run, before the batch: CPU per
 * document of build + sign + the emulator's analysis in one process without I/O; beside it the batch's own CPU per
 * document (the child's user + system, its reaped xmllint children included) and wall per document, and the ratio
 * wall ÷ (floor × documents ÷ cores) the issue bounds at 1.5.
 */
import { spawnSync } from 'node:child_process';
import SQLite from 'better-sqlite3';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, createWriteStream } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { makeTestIssuer } from '../test/helpers/issuer.js';
import { topFunctions } from './profile.js';

// BENCH_FECR_BIN: another build's bin/fecr.js (old against new in the same minutes, docs/benchmarks.md).
const bin = process.env.BENCH_FECR_BIN ?? new URL('../bin/fecr.js', import.meta.url).pathname;
const docs = Number(process.argv[2] ?? 5000);
const dir = mkdtempSync(join(os.tmpdir(), 'fecr-bench-batch-'));
const env = { ...process.env, HOME: dir, FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1' };
const fecr = (args: string[]) => spawnSync(process.execPath, [bin, ...args], { env, cwd: dir, encoding: 'utf8', maxBuffer: 1 << 30 });

writeFileSync(join(dir, 'issuer.json'), JSON.stringify(makeTestIssuer().issuer));
const reg = fecr(['emisor', 'register', 'issuer.json']);
if (reg.status !== 0) throw new Error(reg.stderr);

const noMail = process.env.BENCH_NO_MAIL === '1';
const csv = join(dir, 'bench.csv');
const out = createWriteStream(csv);
out.write('emisor,numeroReferencia,tipoDoc,fechaEmision,codigoActividad,receptorNombre,receptorTipo,receptorNumero,receptorCorreo,moneda,medioPago,condicionVenta,codigo,detalle,cantidad,unidadMedida,precioUnitario,descuento,codigoTarifa\n');
for (let n = 1; n <= docs; n++) {
  const doc = `3101123456,${n},1,2026-03-02T09:15:00-06:00,6201.0,DISTRIBUIDORA EL CAFETAL LIMITADA,02,3101987654,${noMail ? '' : 'compras@elcafetal.example.cr'},CRC,04,01`;
  out.write(`${doc},8311200000000,Consultoría en gestión comercial,${1 + (n % 5)},h,50000,${n % 3 === 0 ? '1000' : ''},08\n`);
  out.write(`${doc},4781400000000,Licencia de software,${1 + (n % 7)},Unid,1250.50,,08\n`);
}
await new Promise<void>((r) => out.end(r));

// The floor, in the same minutes (its own process, so its CPU is its own).
const floorRun = spawnSync(process.execPath, ['--import', 'tsx', new URL('./floor.ts', import.meta.url).pathname, String(Math.min(docs, Number(process.env.BENCH_FLOOR_DOCS ?? 1000))), 'batch'], { encoding: 'utf8', maxBuffer: 1 << 24 });
if (floorRun.status !== 0) throw new Error(`floor: ${floorRun.stderr}`);
const floor = JSON.parse(floorRun.stdout) as { floorMsPerDocument: number; wallMsPerDocument: number };
const cores = os.cpus().length;
// With receptor mails, their floor too (bench/mail-floor.ts: PDF render + MIME build of the same two-line FE, one
// mail at a time, no I/O), in its own process.
let mailFloor: { mailFloorMsPerMail: number } | undefined;
if (!noMail) {
  const mailFloorRun = spawnSync(process.execPath, ['--import', 'tsx', new URL('./mail-floor.ts', import.meta.url).pathname, String(Math.min(docs, 300)), 'batch'], { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (mailFloorRun.status !== 0) throw new Error(`mail floor: ${mailFloorRun.stderr}`);
  mailFloor = JSON.parse(mailFloorRun.stdout) as { mailFloorMsPerMail: number };
}
// The batch renders its mails on one thread per core, at most 4 (service/local-run.ts mailThread, bulk).
const renderThreads = Math.min(cores, Math.max(1, Math.min(4, os.availableParallelism())));

const t0 = process.hrtime.bigint();
const startedAt = Date.now();
// BENCH_PROF=<dir>: the batch under `node --cpu-prof` (one profile per thread), its top functions printed after.
const profDir = process.env.BENCH_PROF;
const run = spawnSync('/usr/bin/time', ['-v', process.execPath, ...(profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir] : []), bin, 'batch', 'bench.csv', '--wait', '--json', '--concurrency', process.env.BENCH_CONCURRENCY ?? '8'], { env, cwd: dir, encoding: 'utf8', maxBuffer: 1 << 30 });
const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
const lastVerdictS = (statSync(join(dir, 'bench.csv.results.jsonl')).mtimeMs - startedAt) / 1000;
const outbox = join(dir, 'data', 'outbox');
const mails = existsSync(outbox) ? readdirSync(outbox).filter((f) => f.endsWith('.eml')).length : 0;
const cpuS = ['User', 'System'].reduce((a, k) => a + Number(new RegExp(`${k} time \\(seconds\\): ([\\d.]+)`).exec(run.stderr)?.[1] ?? NaN), 0);
const rssKb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(run.stderr)?.[1] ?? NaN);
const summary = JSON.parse(run.stdout || '{}') as Record<string, unknown>;
// `documents list` caps at 1000 rows: count the verdicts in the results file (one line per document).
const lines = readFileSync(join(dir, 'bench.csv.results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { clave?: string; estado?: string });
const results = lines.length;
const aceptado = lines.filter((l) => l.estado === 'aceptado').length;
const distinctClaves = new Set(lines.map((l) => l.clave)).size;
// Status queries per document (issue 31): the poll jobs' leases, read from the data dir the batch leaves behind.
const store = new SQLite(join(dir, 'data', 'fecr.db'), { readonly: true });
const polls = store.prepare("select count(*) as jobs, coalesce(sum(attempts), 0) as leases from jobs where type = 'poll'").get() as { jobs: number; leases: number };
store.close();

console.log(
  JSON.stringify(
    {
      machine: `${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, Node ${process.version}`,
      date: new Date().toISOString(),
      rows: docs * 2,
      documents: docs,
      exitCode: run.status,
      receptorMail: !noMail,
      wallSecondsToLastVerdict: Math.round(lastVerdictS * 10) / 10,
      wallSecondsToExit: Math.round(wallS * 10) / 10,
      mailsWritten: mails,
      peakRssMB: Math.round(rssKb / 1024),
      floorMsPerDocument: floor.floorMsPerDocument,
      cpuMsPerDocument: Math.round(((cpuS * 1000) / docs) * 100) / 100,
      wallMsPerDocumentToLastVerdict: Math.round(((lastVerdictS * 1000) / docs) * 100) / 100,
      cores,
      // Issue 31: wall to the last verdict ≤ 1.5 × (floor × documents ÷ cores).
      wallOverFloorBound: Math.round((lastVerdictS * 1000 / ((floor.floorMsPerDocument * docs) / cores)) * 100) / 100,
      cpuOverFloor: Math.round(((cpuS * 1000) / docs / floor.floorMsPerDocument) * 100) / 100,
      // Issue 31: the mails after the last verdict ≤ 1.5 × (mail floor × mails ÷ render threads on the cores).
      ...(mailFloor
        ? {
            mailFloorMsPerMail: mailFloor.mailFloorMsPerMail,
            wallMsPerMailAfterLastVerdict: mails ? Math.round((((wallS - lastVerdictS) * 1000) / mails) * 100) / 100 : null,
            mailsOverFloorBound: mails ? Math.round((((wallS - lastVerdictS) * 1000) / ((mailFloor.mailFloorMsPerMail * mails) / renderThreads)) * 100) / 100 : null,
          }
        : {}),
      loadavg: os.loadavg().map((x) => Math.round(x * 10) / 10),
      summary,
      resultLines: results,
      aceptadoInResults: aceptado,
      distinctClaves,
      statusQueriesPerDocument: Math.round((polls.leases / docs) * 100) / 100,
      targets: { wallOverFloorBound: 1.5, peakRssMB: 200, ...(mailFloor ? { mailsOverFloorBound: 1.5 } : {}) },
    },
    null,
    2,
  ),
);
if (run.status !== 0) console.error(run.stderr.split('\n').slice(0, 5).join('\n'));
if (profDir) console.log(topFunctions(profDir, {}, true));
rmSync(dir, { recursive: true, force: true });
