/**
 * Hosted-mode benchmark (`npm run bench:hosted`, issue 6): submission throughput of one API process vs two API
 * processes on one PostgreSQL. Target: two processes ≥ 1.5× one.
 *
 * Setup: a fresh PostgreSQL database (FECR_BENCH_PG_URL, default postgres://postgres@127.0.0.1:5432/postgres
 * to create it), an account and an issuer (test .p12) written by this process, then as child processes
 * (`node bin/fecr.js serve`, FECR_LOG_LEVEL=warn): one `--role auth` and two `--role api` (no worker: the
 * submissions queue up in graphile-worker's table; this measures the API tier). No load balancer: the load
 * generator (autocannon, in this process) spreads its connections over both ports.
 * Each round: 1 API, `connections` connections, `seconds` s; then 2 APIs, connections/2 each, at once. A
 * submission counts only with 200 and a 50-digit clave; each request carries a distinct numeroReferencia.
 * CPU time (utime+stime from /proc) of each API process, of PostgreSQL's processes and of this process is
 * sampled around every phase, to say where the time goes.
 * Usage: npx tsx bench/hosted.ts [seconds=10] [connections=16] [rounds=2]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import pino from 'pino';
import { request } from 'undici';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { resolveEndpoints } from '../src/hacienda/index.js';
import { createAccount } from '../src/service/accounts.js';
import { registerIssuer } from '../src/service/issuers.js';
import { SecretBox } from '../src/service/secrets.js';
import { openPostgresStore } from '../src/store/index.js';
import { ISSUER, validInvoice } from '../test/helpers/bodies.js';

interface AcRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (req: AcRequest) => AcRequest;
  onResponse?: (status: number, body: string) => void;
}
interface AcResult {
  duration: number;
  errors: number;
  timeouts: number;
  latency: { p50: number; p99: number };
}
type Autocannon = (opts: { url: string; connections: number; duration: number; requests?: AcRequest[] }) => Promise<AcResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const SECONDS = Number(process.argv[2] ?? 10);
const CONNECTIONS = Number(process.argv[3] ?? 16);
const ROUNDS = Number(process.argv[4] ?? 2);
const ADMIN_URL = process.env.FECR_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const BIN = new URL('../bin/fecr.js', import.meta.url).pathname;
const PASSWORD = 'bench-hosted-123';
const round = (n: number, d = 0) => Math.round(n * 10 ** d) / 10 ** d;
const TICK = 100; // USER_HZ of /proc/<pid>/stat on Linux

/** CPU seconds (user + system) of a process, from /proc. */
function cpuOf(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) / TICK;
  } catch {
    return 0;
  }
}
/** CPU seconds of every process called postgres (the server and its backends). */
function cpuOfPostgres(): number {
  let s = 0;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/comm`, 'utf8').trim() === 'postgres') s += cpuOf(Number(d));
    } catch {
      // gone
    }
  }
  return s;
}

// ---- database, account, issuer
const dbName = `fecr_bench_${Date.now().toString(36)}`;
const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`create database ${dbName}`);
const dbUrl = (() => {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${dbName}`;
  return u.toString();
})();
const masterKey = randomBytes(32);
const store = await openPostgresStore({ url: dbUrl, max: 2 });
const ctx = {
  store,
  secrets: new SecretBox(masterKey),
  logger: pino({ level: 'silent' }),
  now: Date.now,
  randomBytes: (n: number) => randomBytes(n),
  hacienda: { environment: 'local' as const, endpoints: resolveEndpoints('local', { baseUrl: 'http://127.0.0.1:9' }) },
};
const { account } = await createAccount(ctx, { base: 'bench', password: PASSWORD });
const p12 = createTestP12({ id: ISSUER.identificacion, type: '02', pin: ISSUER.pinCertificado, name: ISSUER.nombre });
await registerIssuer(ctx, account.id, { ...ISSUER, certificadoHacienda: p12.toString('base64') });
await store.close();

// ---- processes
const dataDir = mkdtempSync(join(os.tmpdir(), 'fecr-bench-hosted-'));
const env = { ...process.env, FECR_NO_KEYCHAIN: '1', FECR_LOG_LEVEL: 'warn', FECR_DATA_DIR: dataDir, FECR_DATABASE_URL: dbUrl, FECR_MASTER_KEY: masterKey.toString('base64') };
const children: ChildProcess[] = [];
async function serve(args: string[]): Promise<{ child: ChildProcess; ready: { authUrl: string; baseUrl: string } }> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const ready = await new Promise<{ authUrl: string; baseUrl: string }>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', (l) => resolve(JSON.parse(l)));
    child.once('exit', (c) => reject(new Error(`fecr serve ${args.join(' ')} exited ${c}`)));
  });
  return { child, ready };
}

const out: Record<string, unknown> = {
  machine: `${os.cpus()[0]?.model ?? '?'} × ${os.cpus().length}`,
  node: process.version,
  date: new Date().toISOString(),
  seconds: SECONDS,
  connections: CONNECTIONS,
};
try {
  const auth = await serve(['--role', 'auth']);
  const apis = await Promise.all([0, 1].map(() => serve(['--role', 'api', '--public-auth-url', auth.ready.authUrl, '--hacienda-url', 'http://127.0.0.1:9'])));
  const login = await request(`${auth.ready.authUrl}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ base: 'bench', password: PASSWORD }) });
  const token = ((await login.body.json()) as { token: string }).token;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
  const fecha = new Date(Date.now() - 6 * 3600_000).toISOString().slice(0, 19) + '-06:00';
  let n = 1_000_000;

  /** autocannon on each URL at once (connections split); accepted/s over the phase. */
  async function load(urls: string[], seconds: number) {
    let accepted = 0;
    let failed = 0;
    const onResponse = (status: number, body: string) => {
      if (status === 200 && /"clave":"\d{50}"/.test(body)) accepted++;
      else failed++;
    };
    const cpu0 = { apis: apis.map((a) => cpuOf(a.child.pid!)), pg: cpuOfPostgres(), self: process.cpuUsage() };
    const t0 = performance.now();
    const results = await Promise.all(
      urls.map((url) =>
        autocannon({
          url,
          connections: Math.max(1, Math.round(CONNECTIONS / urls.length)),
          duration: seconds,
          requests: [{ method: 'POST', path: '/api/enviar/items', headers, setupRequest: (req) => ({ ...req, body: JSON.stringify({ ...validInvoice(), numeroReferencia: ++n, fechaEmision: fecha }) }), onResponse }],
        }),
      ),
    );
    const wall = (performance.now() - t0) / 1000;
    const self = process.cpuUsage(cpu0.self);
    const cpu = {
      apis: apis.map((a, i) => round(cpuOf(a.child.pid!) - cpu0.apis[i]!, 2)),
      postgres: round(cpuOfPostgres() - cpu0.pg, 2),
      loadGenerator: round((self.user + self.system) / 1e6, 2),
    };
    return {
      accepted,
      failed: failed + results.reduce((s, r) => s + r.errors + r.timeouts, 0),
      acceptedPerSecond: round(accepted / wall, 1),
      p50Ms: results.map((r) => r.latency.p50),
      p99Ms: results.map((r) => r.latency.p99),
      cpuSeconds: cpu,
      cpuMsPerSubmission: {
        api: round(((cpu.apis[0]! + cpu.apis[1]!) * 1000) / Math.max(1, accepted), 2),
        postgres: round((cpu.postgres * 1000) / Math.max(1, accepted), 2),
        loadGenerator: round((cpu.loadGenerator * 1000) / Math.max(1, accepted), 2),
      },
      loadAverage: os.loadavg().map((x) => round(x, 2)),
    };
  }

  const urls = apis.map((a) => a.ready.baseUrl);
  await load(urls, 2); // warm-up of both (JIT, pools, key caches)
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const one = await load([urls[0]!], SECONDS);
    const two = await load(urls, SECONDS);
    rounds.push({ one, two, ratio: round(two.acceptedPerSecond / one.acceptedPerSecond, 2) });
  }
  out.rounds = rounds;
  out.target = 'two APIs ≥ 1.5 × one API';
} finally {
  for (const c of children) c.kill('SIGTERM');
  await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))));
  await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.end();
  rmSync(dataDir, { recursive: true, force: true });
}
console.log(JSON.stringify(out, null, 2));
