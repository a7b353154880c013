/**
 * Buyer's-side import benchmark (issue 16): the emulator's test suppliers issue N signed invoices (default 1 000) to
 * the test issuer, into the emulator state file of a fresh local data dir (so the embedded emulator knows them and
 * answers each GET recepción with aceptado and its MensajeHacienda); they are written to a folder as <clave>.xml; then
 * `node bin/fecr.js recibidos import DIR --json` runs as a child process under /usr/bin/time -v: wall time and peak RSS
 * for reading, checking (XSD, XAdES, signer, clave, totals, receptor, state at Hacienda) and storing every file.
 * Needs `npm run build` first. Target: 1 000 files ≤ 20 s.   Usage: node --import tsx bench/recibidos-import.ts [files]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { startEmulator } from '../src/emulator/index.js';
import { makeTestIssuer } from '../test/helpers/issuer.js';

const bin = new URL('../bin/fecr.js', import.meta.url).pathname;
const files = Number(process.argv[2] ?? 1000);
const dir = mkdtempSync(join(os.tmpdir(), 'fecr-bench-recibidos-'));
const env = { ...process.env, HOME: dir, FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1' };
const fecr = (args: string[]) => spawnSync(process.execPath, [bin, ...args], { env, cwd: dir, encoding: 'utf8', maxBuffer: 1 << 30 });

const t = makeTestIssuer();
writeFileSync(join(dir, 'issuer.json'), JSON.stringify(t.issuer));
const reg = fecr(['emisor', 'register', 'issuer.json']);
if (reg.status !== 0) throw new Error(reg.stderr);

mkdirSync(join(dir, 'data'), { recursive: true });
const inbox = join(dir, 'entrada');
mkdirSync(inbox);
const g0 = Date.now();
const emu = await startEmulator({ dataFile: join(dir, 'data', 'emulator.db'), processingDelayMs: 1, validationThreads: 2, validationThreadsAtStart: true });
for (let done = 0; done < files; ) {
  const n = Math.min(250, files - done);
  const res = await fetch(`${emu.url}/_emulator/suppliers/issue`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ receptor: { tipo: '02', numero: t.issuer.identificacion, nombre: t.issuer.nombre }, cantidad: n }),
  });
  const { documentos } = (await res.json()) as { documentos: { clave: string; xml: string }[] };
  for (const d of documentos) writeFileSync(join(inbox, `${d.clave}.xml`), Buffer.from(d.xml, 'base64'));
  done += n;
}
await emu.state.whenIdle();
await emu.close();
const generateS = (Date.now() - g0) / 1000;

const t0 = process.hrtime.bigint();
const run = spawnSync('/usr/bin/time', ['-v', process.execPath, bin, 'recibidos', 'import', 'entrada', '--json'], { env, cwd: dir, encoding: 'utf8', maxBuffer: 1 << 30 });
const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
const rssKb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(run.stderr)?.[1] ?? NaN);
const cpuS = ['User', 'System'].reduce((a, k) => a + Number(new RegExp(`${k} time \\(seconds\\): ([\\d.]+)`).exec(run.stderr)?.[1] ?? NaN), 0);
const results = JSON.parse(run.stdout || '[]') as { estado: string; haciendaEstado: string | null }[];

console.log(
  JSON.stringify(
    {
      machine: `${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, Node ${process.version}`,
      date: new Date().toISOString(),
      files,
      generateS: Number(generateS.toFixed(1)),
      exitCode: run.status,
      wallS: Number(wallS.toFixed(2)),
      filesPerS: Number((files / wallS).toFixed(0)),
      cpuS: Number(cpuS.toFixed(2)),
      loadAverage1m: Number(os.loadavg()[0]!.toFixed(1)),
      peakRssMb: Number((rssKb / 1024).toFixed(0)),
      pendiente: results.filter((r) => r.estado === 'pendiente').length,
      haciendaAceptado: results.filter((r) => r.haciendaEstado === 'aceptado').length,
      invalido: results.filter((r) => r.estado === 'invalido').length,
    },
    null,
    2,
  ),
);
if (run.status !== 0) console.error(run.stderr.slice(-2000));
if (process.env.BENCH_KEEP) console.error(`kept ${dir}`);
else rmSync(dir, { recursive: true, force: true });
