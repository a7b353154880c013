/**
 * Event-loop benchmark (issue 25, point 9): does one tenant's heavy work stall the client API for the others?
 * Two builds of fecr side by side in the same run, e.g. the commit before the change (old) and after it (new), each
 * as its own `node <tree>/bin/fecr.js serve` (env local: auth, API, worker and emulator in one process), fresh data dir:
 *
 *   load   account `pesada` POSTs 8 received comprobantes of ~0.9 MB (1 000 lines each, signed by a test supplier,
 *          addressed to its issuer) to /api/recibidos at once, and downloads the PDF of its 1 000-line document
 *          (/api/consultar/archivo, rendered for the first time)
 *   cheap  meanwhile account `liviana` asks /api/consultar/estado for its document, one request every 20 ms
 *
 * Three times per service, with other documents each time (and another 1 000-line document's PDF): `cold` is its first
 * heavy work (modules loaded, code compiled, threads started on the way), `warm` the third (the second warms up).
 *
 * Measured: the service's event-loop delay over the load (perf_hooks.monitorEventLoopDelay, resolution 10 ms, in the
 * service's process through a --import preload that answers over IPC): max and p99; the cheap request's latency as
 * this process sees it: p50, p99, max; the load's wall time; the service's CPU time over the load (/proc/<pid>/stat:
 * every thread; and its main thread's alone, the event loop's, /proc/<pid>/task/<pid>/stat) and the machine's
 * (/proc/stat: how busy both cores were, other work included).
 * Rounds alternate old and new; the table gives each round and the medians, and old/new of the medians.
 *
 * Preparing the trees (each with its dist/ built; node_modules symlinked):
 *   git worktree add /tmp/fecr-old <commit before>  && ln -s /work/main/node_modules /tmp/fecr-old/node_modules && (cd /tmp/fecr-old && npm run build)
 *   git worktree add /tmp/fecr-new <commit after>   && ln -s /work/main/node_modules /tmp/fecr-new/node_modules && (cd /tmp/fecr-new && npm run build)
 * Usage: node --import tsx bench/event-loop.ts OLD_DIR NEW_DIR [rounds=3]
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { request } from 'undici';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { ISSUER, validInvoice } from '../test/helpers/bodies.js';
import { largeInvoiceBody, largeSupplierXmls } from '../test/helpers/heavy-docs.js';

const [oldDir, newDir] = [process.argv[2], process.argv[3]].map((d) => (d ? resolve(d) : undefined));
if (!oldDir || !newDir) throw new Error('usage: node --import tsx bench/event-loop.ts OLD_DIR NEW_DIR [rounds]');
const ROUNDS = Number(process.argv[4] ?? 3);
const BUYER = { tipo: '02', numero: ISSUER.identificacion, nombre: ISSUER.nombre! };
const PIN = '1234';
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim() || 100);

const work = mkdtempSync(join(os.tmpdir(), 'fecr-bench-eld-'));
const preload = join(work, 'eld.mjs');
writeFileSync(
  preload,
  `import { monitorEventLoopDelay } from 'node:perf_hooks';
const h = monitorEventLoopDelay({ resolution: 10 });
process.on('message', (m) => {
  if (m === 'eld:start') { h.reset(); h.enable(); }
  if (m === 'eld:stop') { h.disable(); process.send({ maxMs: h.max / 1e6, p99Ms: h.percentile(99) / 1e6, meanMs: h.mean / 1e6 }); }
});
process.channel?.unref();
`,
);

const round = (n: number, d = 0) => Math.round(n * 10 ** d) / 10 ** d;
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
const median = (xs: number[]) => pct([...xs].sort((a, b) => a - b), 50);

/** utime + stime of a process (every thread), or of one of its threads (`tid`: the main thread's is the pid), seconds. */
function processCpu(pid: number, tid?: number): number {
  const f = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'latin1').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}
/** The machine's busy and total jiffies (all cores). */
function machineCpu(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'latin1').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - f[3]! - f[4]!, total };
}

async function post(url: string, body: unknown, token?: string): Promise<{ status: number; body: any; ms: number }> {
  const t0 = performance.now();
  const r = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await r.body.text();
  return { status: r.statusCode, body: text ? JSON.parse(text) : undefined, ms: performance.now() - t0 };
}

interface Result {
  tree: 'old' | 'new';
  /** The service's first heavy work (cold: modules loaded, code compiled, threads started), or its third (warm). */
  phase: 'cold' | 'warm';
  loadS: number;
  eldMaxMs: number;
  eldP99Ms: number;
  cheapN: number;
  cheapP50Ms: number;
  cheapP99Ms: number;
  cheapMaxMs: number;
  serviceCpuS: number;
  loopCpuS: number;
  machineBusyPct: number;
  ok: boolean;
}

let numero = 1;

async function runOnce(tree: 'old' | 'new', dir: string): Promise<Result[]> {
  const dataDir = mkdtempSync(join(work, `${tree}-`));
  const bin = join(dir, 'bin', 'fecr.js');
  const env = { ...process.env, FECR_NO_KEYCHAIN: '1', FECR_LOG_LEVEL: 'warn' };
  const passwords = { pesada: 'bench-pesada-123', liviana: 'bench-liviana-123' };
  for (const [base, password] of Object.entries(passwords)) {
    const c = spawnSync(process.execPath, [bin, 'accounts', 'create', base, '--password-stdin', '--data-dir', dataDir], { env, input: `${password}\n`, encoding: 'utf8' });
    if (c.status !== 0) throw new Error(`${tree}: accounts create: ${c.stderr}`);
  }
  const child: ChildProcess = spawn(process.execPath, ['--import', pathToFileURL(preload).href, bin, 'serve', '--data-dir', dataDir, '--emulator-delay', '50'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    const urls: { authUrl: string; baseUrl: string } = await new Promise((res, rej) => {
      createInterface({ input: child.stdout! }).once('line', (l) => res(JSON.parse(l)));
      child.once('exit', (c) => rej(new Error(`${tree}: fecr serve exited ${c}: ${stderr}`)));
    });
    const token: Record<string, string> = {};
    const p12 = createTestP12({ id: ISSUER.identificacion, type: '02', pin: PIN, name: ISSUER.nombre });
    const issuerBody = { ...ISSUER, pinCertificado: PIN, claveHacienda: Buffer.from('ClaveHacienda!1').toString('base64'), certificadoHacienda: p12.toString('base64') };
    for (const [base, password] of Object.entries(passwords)) {
      const login = await post(`${urls.authUrl}/login`, { base, password });
      if (login.status !== 200) throw new Error(`${tree}: login ${JSON.stringify(login.body)}`);
      token[base] = login.body.token;
      const reg = await post(`${urls.baseUrl}/api/enviar/emisor`, issuerBody, token[base]);
      if (reg.status !== 200) throw new Error(`${tree}: enviar/emisor ${JSON.stringify(reg.body)}`);
    }
    const fecha = new Date(Date.now() - 6 * 3600_000).toISOString().slice(0, 19) + '-06:00';
    // Three 1 000-line documents (one PDF per load, each rendered for the first time) and the cheap account's one.
    const bigs = [];
    for (const n of [1, 2, 3]) bigs.push(await post(`${urls.baseUrl}/api/enviar/items`, { ...largeInvoiceBody(1000, n), fechaEmision: fecha }, token.pesada));
    const small = await post(`${urls.baseUrl}/api/enviar/items`, { ...validInvoice(), numeroReferencia: 1, fechaEmision: fecha }, token.liviana);
    if (bigs.some((b) => b.status !== 200) || small.status !== 200) throw new Error(`${tree}: enviar/items ${JSON.stringify([...bigs.map((b) => b.body), small.body])}`);
    // All decided (and the receptor mails written) before the load: the service is idle when it starts.
    for (const [clave, t] of [...bigs.map((b) => [b.body.clave, token.pesada] as const), [small.body.clave, token.liviana] as const]) {
      for (let i = 0; i < 600; i++) {
        const s = await post(`${urls.baseUrl}/api/consultar/estado`, { claveHacienda: clave }, t);
        if (['aceptado', 'rechazado', 'error'].includes(s.body?.data?.estado)) break;
        await sleep(100);
      }
    }
    await sleep(3000);
    for (let i = 0; i < 5; i++) await post(`${urls.baseUrl}/api/consultar/estado`, { claveHacienda: small.body.clave }, token.liviana); // warm
    const out: Result[] = [];
    for (const [i, phase] of (['cold', 'warm', 'warm'] as const).entries()) {
      const r = await load(phase, bigs[i]!.body.clave);
      if (i !== 1) out.push(r); // the second load only warms up
      await sleep(2000);
    }
    return out;

    /** One load: 8 uploads and the PDF from `pesada`, the cheap requests of `liviana` meanwhile. */
    async function load(phase: Result['phase'], bigClave: string): Promise<Result> {
      const docs = largeSupplierXmls(8, BUYER, 1000, numero);
      numero += 8;
      const bodies = docs.map((d, i) => JSON.stringify({ xml: Buffer.from(d.xml).toString('base64'), nombre: `grande-${i}.xml` }));

      const eld = new Promise<{ maxMs: number; p99Ms: number }>((res) => child.once('message', (m) => res(m as { maxMs: number; p99Ms: number })));
      child.send('eld:start');
      await sleep(50);
      const cpu0 = processCpu(child.pid!);
      const loop0 = processCpu(child.pid!, child.pid!);
      const m0 = machineCpu();
      const t0 = performance.now();
      let loading = true;
      const cheap: number[] = [];
      let cheapFailed = 0;
      const cheapLoop = (async () => {
        while (loading) {
          const r = await post(`${urls.baseUrl}/api/consultar/estado`, { claveHacienda: small.body.clave }, token.liviana);
          if (r.status === 200) cheap.push(r.ms);
          else cheapFailed++;
          await sleep(20);
        }
      })();
      const answers = await Promise.all([
        post(`${urls.baseUrl}/api/consultar/archivo`, { claveHacienda: bigClave, fileType: 'PDF' }, token.pesada),
        ...bodies.map((b) => post(`${urls.baseUrl}/api/recibidos`, b, token.pesada)),
      ]);
      const loadMs = performance.now() - t0;
      loading = false;
      await cheapLoop;
      const cpu1 = processCpu(child.pid!);
      const loop1 = processCpu(child.pid!, child.pid!);
      const m1 = machineCpu();
      child.send('eld:stop');
      const delay = await eld;
      const ok = cheapFailed === 0 && answers[0]!.status === 200 && answers.slice(1).every((a) => a.status === 200 && a.body.data[0].estado === 'pendiente');
      if (!ok) console.error(tree, phase, 'unexpected answers', JSON.stringify(answers.map((a) => [a.status, a.body?.data?.[0]?.estado ?? a.body?.error])), { cheapFailed });
      const sorted = cheap.sort((a, b) => a - b);
      return {
        tree,
        phase,
        loadS: round(loadMs / 1000, 2),
        eldMaxMs: round(delay.maxMs),
        eldP99Ms: round(delay.p99Ms),
        cheapN: sorted.length,
        cheapP50Ms: round(pct(sorted, 50), 1),
        cheapP99Ms: round(pct(sorted, 99)),
        cheapMaxMs: round(sorted.at(-1) ?? NaN),
        serviceCpuS: round(cpu1 - cpu0, 2),
        loopCpuS: round(loop1 - loop0, 2),
        machineBusyPct: round((100 * (m1.busy - m0.busy)) / (m1.total - m0.total)),
        ok,
      };
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

const results: Result[] = [];
console.log(JSON.stringify({ machine: `${os.cpus()[0]?.model.trim()} × ${os.cpus().length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`, date: new Date().toISOString(), loadAverage: os.loadavg().map((x) => round(x, 2)), old: oldDir, new: newDir }));
try {
  for (let r = 0; r < ROUNDS; r++) {
    for (const [tree, dir] of (r % 2 === 0 ? [['old', oldDir], ['new', newDir]] : [['new', newDir], ['old', oldDir]]) as ['old' | 'new', string][]) {
      for (const res of await runOnce(tree, dir)) {
        results.push(res);
        console.log(JSON.stringify({ round: r + 1, loadAverage: os.loadavg()[0]!.toFixed(2), ...res }));
      }
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

const keys = ['loadS', 'eldMaxMs', 'eldP99Ms', 'cheapP50Ms', 'cheapP99Ms', 'cheapMaxMs', 'serviceCpuS', 'loopCpuS', 'machineBusyPct'] as const;
console.log(`\n| median of ${ROUNDS} | ${keys.join(' | ')} |`);
console.log(`|---|${keys.map(() => '---').join('|')}|`);
const med = (tree: 'old' | 'new', phase: Result['phase']) =>
  Object.fromEntries(keys.map((k) => [k, median(results.filter((r) => r.tree === tree && r.phase === phase).map((r) => r[k]))])) as Record<(typeof keys)[number], number>;
for (const phase of ['cold', 'warm'] as const) {
  const [o, n] = [med('old', phase), med('new', phase)];
  console.log(`| old, ${phase} | ${keys.map((k) => o[k]).join(' | ')} |`);
  console.log(`| new, ${phase} | ${keys.map((k) => n[k]).join(' | ')} |`);
  console.log(`| old / new, ${phase} | ${keys.map((k) => round(o[k] / n[k], 2)).join(' | ')} |`);
}
