/**
 * Emulator throughput (`npm run bench:emulator`): receptions per second the local Hacienda emulator
 * sustains with full validation (XSD, signature, signer, clave, consecutivo, totals) on this machine.
 * The emulator runs as its own process (`fecr hacienda serve --delay 0`); this process is the load:
 * it signs N 10-line invoices up front, gets one IdP token, POSTs them with bounded concurrency over a
 * keep-alive pool, then waits until the emulator has given every verdict.
 * Usage: npx tsx bench/emulator.ts [N=1000] [concurrency=32]
 * It reports the rate over the whole run and the steady-state rate, over the last three quarters of the verdicts.
 *
 * Besides the rates (wall clock, so they depend on what else the machine is doing), it reports the CPU
 * time spent per verdict (Linux /proc: the emulator process with all its threads, the xmllint runs via
 * the emulator's helper shell, and this load generator) and the rate those would allow if they had all
 * of the machine's cores to themselves: a figure that other work on the machine does not distort.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { createInterface } from 'node:readline';
import { Pool, request } from 'undici';
import { issueComprobante } from '../src/core/comprobante.js';
import { loadP12 } from '../src/core/sign/p12.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { ISSUER } from '../test/helpers/bodies.js';
import { tenLineInvoice } from './sign.js';

const N = Number(process.argv[2] ?? 1000);
const CONCURRENCY = Number(process.argv[3] ?? 32);

// EMU_PROF=<dir>: run the emulator under `node --cpu-prof` (one profile per thread, workers included).
// EMU_THREADS=<n>: `--validation-threads n` (default: the emulator's own, cores - 1 from 1 to 2).
// EMU_NODE_ARGS="<flags>": extra Node flags for the emulator. EMU_THREAD_CPU=1: CPU time of each emulator thread.
// EMU_LOG=<file>: the emulator's stdout after its first line.
const child = spawn(
  process.execPath,
  [
    ...(process.env.EMU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.EMU_PROF}`] : []),
    ...(process.env.EMU_NODE_ARGS ? process.env.EMU_NODE_ARGS.split(' ') : []),
    new URL('../bin/fecr.js', import.meta.url).pathname,
    'hacienda',
    'serve',
    '--delay',
    '0',
    ...(process.env.EMU_THREADS ? ['--validation-threads', process.env.EMU_THREADS] : []),
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const url: string = await new Promise((resolve, reject) => {
  const lines = createInterface({ input: child.stdout! });
  // EMU_LOG=<file>: the emulator's other stdout lines (e.g. with EMU_NODE_ARGS=--trace-gc).
  const log = process.env.EMU_LOG ? createWriteStream(process.env.EMU_LOG) : undefined;
  lines.on('line', (l) => {
    if (l.startsWith('{"url"')) resolve((JSON.parse(l) as { url: string }).url);
    else log?.write(l + '\n');
  });
  child.once('exit', (c) => reject(new Error(`emulator exited ${c}`)));
});

/** CPU ms of a process: its own (utime + stime, all threads) and its reaped children's (cutime + cstime). */
function cpuMs(pid: number): { own: number; children: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number); // fields from 3 (state) on
    const ms = (ticks: number) => (ticks * 1000) / 100; // USER_HZ is 100 on Linux
    return { own: ms(f[11]! + f[12]!), children: ms(f[13]! + f[14]!) };
  } catch {
    return undefined;
  }
}

/**
 * xmllint's CPU so far: runs the emulator spawned itself and reaped, plus its live children (the helper
 * shell) with the runs they reaped.
 */
function xmllintCpuMs(pid: number): number {
  let children: string[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  } catch {
    // no /proc children list: only the reaped runs
  }
  const live = children.reduce((sum, c) => {
    const t = cpuMs(Number(c));
    return sum + (t ? t.own + t.children : 0);
  }, 0);
  return (cpuMs(pid)?.children ?? 0) + live;
}

try {
  const pin = '1234';
  const p12 = createTestP12({ id: ISSUER.identificacion, type: '02', pin });
  const creds = loadP12(p12, pin, new Date());
  const issuer = { ...ISSUER, pinCertificado: pin, certificadoHacienda: p12.toString('base64') };
  const t0 = performance.now();
  const docs = Array.from({ length: N }, (_, i) => {
    const body = { ...tenLineInvoice(), numeroReferencia: i + 1, fechaEmision: new Date().toISOString() };
    const r = issueComprobante(body, issuer, creds, { securityCode: String(i).padStart(8, '0'), signingTime: new Date(), newId: () => randomBytes(8).toString('hex') });
    if (!r.ok) throw new Error(JSON.stringify(r.findings));
    // The request bodies are serialized up front too: the load generator shares the machine's two cores.
    return JSON.stringify({
      clave: r.doc.clave,
      fecha: r.doc.fechaEmision,
      emisor: { tipoIdentificacion: '02', numeroIdentificacion: ISSUER.identificacion },
      receptor: { tipoIdentificacion: '02', numeroIdentificacion: '4000001021' },
      comprobanteXml: Buffer.from(r.xml).toString('base64'),
    });
  });
  const signMs = performance.now() - t0;

  const token = await request(`${url}/auth/realms/rut/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', client_id: 'api-prod', username: 'bench@fecr', password: 'x' }).toString(),
  }).then((r) => r.body.json() as Promise<{ access_token: string }>);

  // Warm-up outside the timed window: the first health call loads the CABYS catalogue it reports on.
  await request(`${url}/_emulator/health`).then((r) => r.body.json());

  const pool = new Pool(url, { connections: CONCURRENCY, pipelining: 1 });
  const load0 = os.loadavg();
  const emuCpu0 = cpuMs(child.pid!)?.own;
  const xmllintCpu0 = xmllintCpuMs(child.pid!);
  const ownCpu0 = process.cpuUsage();
  const start = performance.now();
  let next = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < docs.length) {
        const doc = docs[next++]!;
        const r = await pool.request({
          path: '/recepcion/v1/recepcion',
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `bearer ${token.access_token}` },
          body: doc,
        });
        await r.body.dump();
        if (r.statusCode !== 202 && r.statusCode !== 201) failed++;
      }
    }),
  );
  const postedMs = performance.now() - start;
  // Verdicts given so far = receptions - pending. The steady-state rate leaves out the first quarter of the
  // verdicts (V8 compiling the hot code of the event loop and the analysis thread).
  let health: { pending: number; receptions: number };
  let quarter: { ms: number; decided: number } | undefined;
  do {
    await new Promise((r) => setTimeout(r, 20));
    health = (await request(`${url}/_emulator/health`).then((r) => r.body.json())) as typeof health;
    const decided = health.receptions - health.pending;
    if (!quarter && decided >= N / 4) quarter = { ms: performance.now() - start, decided };
  } while (health.pending > 0 || health.receptions < N - failed);
  const doneMs = performance.now() - start;
  const steady = quarter && doneMs > quarter.ms ? Math.round(((N - failed - quarter.decided) / (doneMs - quarter.ms)) * 1000) : undefined;
  const ownCpu = process.cpuUsage(ownCpu0);
  const emuCpu = emuCpu0 === undefined ? undefined : cpuMs(child.pid!)!.own - emuCpu0;
  const helperCpu = xmllintCpuMs(child.pid!) - xmllintCpu0;
  const load1 = os.loadavg();
  if (process.env.EMU_THREAD_CPU) {
    // CPU of each of the emulator's threads over its whole life (main thread = the process id).
    const threads = readdirSync(`/proc/${child.pid}/task`).map((tid) => {
      const stat = readFileSync(`/proc/${child.pid}/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
      return { tid: tid === String(child.pid) ? 'main' : tid, ms: (f[11]! + f[12]!) * 10 };
    });
    console.error('emulator threads, CPU ms since start:', JSON.stringify(threads.filter((t) => t.ms > 0).sort((a, b) => b.ms - a.ms)));
  }
  const rec = (await request(`${url}/_emulator/receptions`).then((r) => r.body.json())) as { receptions: { estado: string }[] };
  const accepted = rec.receptions.filter((x) => x.estado === 'aceptado').length;
  await pool.close();
  console.log(
    JSON.stringify(
      {
        machine: `${os.cpus()[0]?.model} × ${os.cpus().length}, Node ${process.version}`,
        date: new Date().toISOString(),
        documents: N,
        concurrency: CONCURRENCY,
        signingUpFrontMs: Math.round(signMs),
        postsPerSecond: Math.round((N / postedMs) * 1000),
        verdictsPerSecond: Math.round((N / doneMs) * 1000),
        verdictsPerSecondAfterFirstQuarter: steady,
        failedPosts: failed,
        aceptado: accepted,
        ...(emuCpu !== undefined && {
          cpuMsPerVerdict: {
            emulator: round2(emuCpu / N),
            xmllint: round2(helperCpu / N),
            loadGenerator: round2((ownCpu.user + ownCpu.system) / 1000 / N),
            total: round2((emuCpu + helperCpu + (ownCpu.user + ownCpu.system) / 1000) / N),
          },
          emulatorCoresBusy: round2(emuCpu / doneMs),
          // What the measured CPU per verdict allows on this machine's cores with nothing else running.
          verdictsPerSecondCpuBound: Math.round((os.cpus().length * 1000 * N) / (emuCpu + helperCpu + (ownCpu.user + ownCpu.system) / 1000)),
        }),
        loadAverage1m: { before: round2(load0[0]!), after: round2(load1[0]!) },
      },
      null,
      2,
    ),
  );
} finally {
  child.kill('SIGTERM');
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
