/**
 * Archive benchmark (issue 29): `fecr demo` makes a local data dir with a month of accepted documents (sales with
 * Hacienda's answers, purchases with our MensajeReceptor); its sales rows are then copied straight through the store
 * (each copy its own clave and numero, the same signed XML and answer) up to N documents (default 20 000); then
 * `fecr archive export` of the month runs as a child process under /usr/bin/time -v (wall time, peak RSS), without
 * PDFs and, on a share of them, with PDFs; then `fecr archive verify` of the archive. The CLI runs from the sources
 * through tsx (test/helpers/fecr-dev.ts): its startup and compile are in the figures.
 * Usage: node --import tsx bench/archive.ts [documents] [documents-with-pdf]
 * With OLD_TREE=<a checkout of an older commit, its own node_modules or a link to these>, `verify` runs from both trees on
 * the same archive, alternating (old, new, new, old), and both figures are printed: old against new in the same minutes.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { formatCr } from '../src/core/dates.js';
import { openSqliteStore } from '../src/store/index.js';

const total = Number(process.argv[2] ?? 20000);
const withPdf = Number(process.argv[3] ?? 2000);
const home = mkdtempSync(join(os.tmpdir(), 'fecr-bench-archive-'));
const work = join(home, 'work');
const env = { PATH: process.env.PATH ?? '', HOME: home, FECR_NO_KEYCHAIN: '1' };
const dev = new URL('../test/helpers/fecr-dev.ts', import.meta.url).pathname;
const tsx = import.meta.resolve('tsx');
const oldTree = process.env.OLD_TREE;
const fecr = (args: string[], timed = false, devFile = dev) => {
  const argv = [process.execPath, '--import', tsx, devFile, ...args];
  const r = timed
    ? spawnSync('/usr/bin/time', ['-v', ...argv], { env, cwd: work, encoding: 'utf8', maxBuffer: 1 << 28 })
    : spawnSync(argv[0]!, argv.slice(1), { env, cwd: work, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`fecr ${args.join(' ')}: ${r.stderr}`);
  return r;
};
const figures = (r: ReturnType<typeof fecr>) => ({
  wallS: Number(/Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):(\d+(?:\.\d+)?)/.exec(r.stderr)!.slice(1).reduce((a, v) => a * 60 + Number(v ?? 0), 0).toFixed(1)),
  peakRssMb: Math.round(Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr)?.[1] ?? NaN) / 1024),
});

spawnSync('mkdir', ['-p', work]);
fecr(['demo', '--json']);
const db = readdirSync(home, { recursive: true, encoding: 'utf8' }).find((f) => f.endsWith('fecr.db'))!;
const store = await openSqliteStore({ file: join(home, db) });
const base = await store.db.selectFrom('documents').selectAll().where('kind', 'in', ['FE', 'ND', 'NC', 'TE', 'FEE', 'FEC', 'REP']).execute();
const g0 = Date.now();
let n = base.length;
for (let k = 1; n < total; k++) {
  const rows = base.slice(0, Math.min(base.length, total - n)).map(({ id: _id, submission_key: _s, ...r }, j) => ({
    ...r,
    clave: r.clave.slice(0, 31) + String(k).padStart(10, '0') + r.clave.slice(41, 42) + String(j).padStart(8, '0'),
    numero_referencia: r.numero_referencia + k * 100,
  }));
  await store.db.insertInto('documents').values(rows).execute();
  n += rows.length;
}
await store.close?.();
const generateS = (Date.now() - g0) / 1000;
const today = formatCr(new Date()).slice(0, 10);
const period = ['--profile', 'demo', '--since', `${today.slice(0, 7)}-01`, '--until', today];
const out = join(home, 'month.tar.gz');
const noPdf = figures(fecr(['archive', 'export', ...period, '--no-pdf', out], true));
const sizeMb = Number((statSync(out).size / 1e6).toFixed(1));
const verify = figures(fecr(['archive', 'verify', out], true));
let verifyOld: { runs: ReturnType<typeof figures>[]; newRuns: ReturnType<typeof figures>[] } | undefined;
if (oldTree) {
  const oldDev = join(oldTree, 'test/helpers/fecr-dev.ts');
  const runs = [figures(fecr(['archive', 'verify', out], true, oldDev))];
  const newRuns = [verify, figures(fecr(['archive', 'verify', out], true))];
  runs.push(figures(fecr(['archive', 'verify', out], true, oldDev)));
  verifyOld = { runs, newRuns };
}
// PDFs: a share of the documents (rendering is the slow part), the same month cut to its first documents.
console.log(JSON.stringify({ machine: `${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, Node ${process.version}`, date: new Date().toISOString(), documents: n, generateS, exportNoPdf: { ...noPdf, archiveMb: sizeMb }, verify, ...(verifyOld ? { verifyOldAgainstNew: verifyOld, loadavg: os.loadavg() } : {}) }, null, 2));
if (withPdf > 0) {
  const store2 = await openSqliteStore({ file: join(home, db) });
  const keep = await store2.db.selectFrom('documents').select('id').orderBy('id').limit(1).offset(withPdf).executeTakeFirst();
  if (keep) await store2.db.deleteFrom('documents').where('id', '>=', keep.id).where('kind', 'in', ['FE', 'ND', 'NC', 'TE', 'FEE', 'FEC', 'REP']).execute();
  await store2.close?.();
  const pdf = figures(fecr(['archive', 'export', ...period, join(home, 'pdf.tar.gz')], true));
  console.log(JSON.stringify({ documentsWithPdf: withPdf, exportWithPdf: { ...pdf, archiveMb: Number((statSync(join(home, 'pdf.tar.gz')).size / 1e6).toFixed(1)) } }, null, 2));
}
