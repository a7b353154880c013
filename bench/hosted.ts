/**
 * Hosted-mode benchmark (`npm run bench:hosted`, issue 6): submission throughput of one API process vs two API
 * processes on one PostgreSQL. Target: two processes ≥ 1.5× one.
 *
 * Setup: a fresh PostgreSQL database (FECR_BENCH_PG_URL, default postgres://postgres@127.0.0.1:5432/postgres
 * to create it), an account and an issuer (test .p12) written by this process, then as child processes
 * (`node bin/fecr.js serve`, FECR_LOG_LEVEL=warn): one `--role auth` and two `--role api` (no worker: the
 * submissions queue up in graphile-worker's table; this measures the API tier). No load balancer: one load
 * generator per API port, at once.
 * Load generator: wrk (C, one thread per port; a Lua script gives each request a distinct numeroReferencia and
 * counts a submission only with 200 and a 50-digit clave) when `wrk` is on the PATH, else autocannon in this
 * process (FECR_BENCH_LOAD=autocannon forces it). The same generator and method for both phases.
 * Each round: 1 API with `connections` connections and 2 APIs with connections/2 each, `seconds` s each; the
 * order of the two phases alternates between rounds (one→two, two→one, …) so that drift (the queue growing,
 * other work on the machine) does not always favour the same phase. Reported: each round's ratio, and the
 * medians over rounds.
 * CPU time (utime+stime from /proc) around every phase: each API process; PostgreSQL's backends serving the
 * bench database (from pg_stat_activity) and, separately, every postgres process on the machine (that one
 * includes other databases' work); the load generator (wrk's CPU from its shell's cutime/cstime, or this
 * process's CPU for autocannon).
 * FECR_BENCH_FROM_SOURCE=1: run the servers from src/ with tsx (test/helpers/fecr-dev.ts) instead of dist/.
 * Usage: npx tsx bench/hosted.ts [seconds=10] [connections=16] [rounds=4]
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
const ROUNDS = Number(process.argv[4] ?? 4);
const ADMIN_URL = process.env.FECR_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const FROM_SOURCE = process.env.FECR_BENCH_FROM_SOURCE === '1';
const ENTRY = FROM_SOURCE ? ['--import', import.meta.resolve('tsx'), new URL('../test/helpers/fecr-dev.ts', import.meta.url).pathname] : [new URL('../bin/fecr.js', import.meta.url).pathname];
const USE_WRK = process.env.FECR_BENCH_LOAD !== 'autocannon' && spawnSync('wrk', ['--version']).error === undefined;
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
  const child = spawn(process.execPath, [...ENTRY, 'serve', ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] });
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
  let n = 2_000_000_000; // autocannon's numbers (wrk's: 100 000 000 per phase)

  /** CPU seconds of the backends serving the bench database, per pid (pool connections live through a phase). */
  const pgBackends = async (): Promise<Map<number, number>> => {
    const r = await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [dbName]);
    return new Map(r.rows.map((row) => [Number(row.pid), cpuOf(Number(row.pid))]));
  };
  const backendsDelta = (before: Map<number, number>, after: Map<number, number>) =>
    [...after].reduce((s, [pid, cpu]) => s + cpu - (before.get(pid) ?? 0), 0);

  interface LoadResult {
    accepted: number;
    failed: number;
    seconds: number;
    p50: number;
    p99: number;
    /** CPU seconds of the load generator (wrk only; autocannon: measured around the phase in this process). */
    cpu?: number;
  }

  /** wrk on one URL: a Lua script gives each request a distinct numeroReferencia (from `base`) and checks the answer. */
  function wrkLoad(url: string, connections: number, seconds: number, base: number): Promise<LoadResult> {
    const body = JSON.stringify({ ...validInvoice(), numeroReferencia: 0, fechaEmision: fecha });
    const [prefix, suffix] = body.split('"numeroReferencia":0');
    const lua = `
local prefix, suffix = [==[${prefix}"numeroReferencia":]==], [==[${suffix}]==]
local headers = { ["content-type"] = "application/json", ["authorization"] = [==[Bearer ${token}]==] }
local clave = '"clave":"' .. string.rep("%d", 50) .. '"'
local threads, n = {}, 0
accepted, failed = 0, 0
function setup(thread) thread:set("id", #threads); table.insert(threads, thread) end
function init(args) n = ${base} + id * 10000000 end
function request() n = n + 1; return wrk.format("POST", "/api/enviar/items", headers, prefix .. n .. suffix) end
function response(status, hdrs, b) if status == 200 and string.find(b, clave) then accepted = accepted + 1 else failed = failed + 1 end end
function done(summary, latency, requests)
  local a, f = 0, 0
  for _, t in ipairs(threads) do a = a + t:get("accepted"); f = f + t:get("failed") end
  local e = summary.errors
  io.write(string.format('{"accepted":%d,"failed":%d,"errors":%d,"us":%d,"p50":%.3f,"p99":%.3f}\\n', a, f,
    e.connect + e.read + e.write + e.timeout, summary.duration, latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
`;
    const script = join(dataDir, `load-${base}.lua`);
    writeFileSync(script, lua);
    // The shell waits for wrk, then prints its own /proc stat: cutime + cstime = wrk's CPU.
    const child = spawn('sh', ['-c', 'wrk "$@"; cat /proc/$$/stat', 'sh', '-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', script, url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout!.on('data', (c: Buffer) => (text += c.toString()));
    return new Promise((resolve, reject) => {
      child.once('exit', () => {
        const lines = text.trim().split('\n');
        const json = lines.find((l) => l.startsWith('{"accepted"'));
        const stat = lines.at(-1) ?? '';
        if (!json) return reject(new Error(`wrk gave no result: ${text}`));
        const r = JSON.parse(json) as { accepted: number; failed: number; errors: number; us: number; p50: number; p99: number };
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        resolve({ accepted: r.accepted, failed: r.failed + r.errors, seconds: r.us / 1e6, p50: r.p50, p99: r.p99, cpu: (Number(f[13]) + Number(f[14])) / TICK });
      });
    });
  }

  /** autocannon (in this process) on one URL. */
  async function autocannonLoad(url: string, connections: number, seconds: number): Promise<LoadResult> {
    let accepted = 0;
    let failed = 0;
    const onResponse = (status: number, body: string) => {
      if (status === 200 && /"clave":"\d{50}"/.test(body)) accepted++;
      else failed++;
    };
    const t0 = performance.now();
    const r = await autocannon({
      url,
      connections,
      duration: seconds,
      requests: [{ method: 'POST', path: '/api/enviar/items', headers, setupRequest: (req) => ({ ...req, body: JSON.stringify({ ...validInvoice(), numeroReferencia: ++n, fechaEmision: fecha }) }), onResponse }],
    });
    return { accepted, failed: failed + r.errors + r.timeouts, seconds: (performance.now() - t0) / 1000, p50: r.latency.p50, p99: r.latency.p99 };
  }

  let phaseNo = 0;
  /** The load generator on each URL at once (connections split); accepted/s over the phase. */
  async function load(urls: string[], seconds: number) {
    phaseNo++;
    const connections = Math.max(1, Math.round(CONNECTIONS / urls.length));
    const cpu0 = { apis: apis.map((a) => cpuOf(a.child.pid!)), pgAll: cpuOfPostgres(), pgDb: await pgBackends(), self: process.cpuUsage() };
    const results = await Promise.all(urls.map((url, i) => (USE_WRK ? wrkLoad(url, connections, seconds, phaseNo * 100_000_000 + i * 50_000_000) : autocannonLoad(url, connections, seconds))));
    const self = process.cpuUsage(cpu0.self);
    const accepted = results.reduce((s, r) => s + r.accepted, 0);
    const cpu = {
      apis: apis.map((a, i) => round(cpuOf(a.child.pid!) - cpu0.apis[i]!, 2)),
      postgresBenchDb: round(backendsDelta(cpu0.pgDb, await pgBackends()), 2),
      postgresAll: round(cpuOfPostgres() - cpu0.pgAll, 2),
      loadGenerator: round(USE_WRK ? results.reduce((s, r) => s + (r.cpu ?? 0), 0) : (self.user + self.system) / 1e6, 2),
    };
    const perSubmission = (cpuSeconds: number) => round((cpuSeconds * 1000) / Math.max(1, accepted), 2);
    return {
      accepted,
      failed: results.reduce((s, r) => s + r.failed, 0),
      acceptedPerSecond: round(accepted / Math.max(...results.map((r) => r.seconds)), 1),
      p50Ms: results.map((r) => r.p50),
      p99Ms: results.map((r) => r.p99),
      cpuSeconds: cpu,
      cpuMsPerSubmission: {
        api: perSubmission(cpu.apis[0]! + cpu.apis[1]!),
        postgresBenchDb: perSubmission(cpu.postgresBenchDb),
        postgresAll: perSubmission(cpu.postgresAll),
        loadGenerator: perSubmission(cpu.loadGenerator),
      },
      loadAverage: os.loadavg().map((x) => round(x, 2)),
    };
  }

  const urls = apis.map((a) => a.ready.baseUrl);
  await load(urls, 2); // warm-up of both (JIT, pools, key caches)
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const oneFirst = r % 2 === 0;
    const first = await load(oneFirst ? [urls[0]!] : urls, SECONDS);
    const second = await load(oneFirst ? urls : [urls[0]!], SECONDS);
    const [one, two] = oneFirst ? [first, second] : [second, first];
    rounds.push({ order: oneFirst ? 'one, two' : 'two, one', one, two, ratio: round(two.acceptedPerSecond / one.acceptedPerSecond, 2) });
  }
  const median = (xs: number[]) => {
    const v = [...xs].sort((a, b) => a - b);
    return v.length % 2 ? v[(v.length - 1) / 2]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2;
  };
  out.loadGenerator = USE_WRK ? 'wrk' : 'autocannon';
  out.median = {
    oneAcceptedPerSecond: round(median(rounds.map((r) => r.one.acceptedPerSecond)), 1),
    twoAcceptedPerSecond: round(median(rounds.map((r) => r.two.acceptedPerSecond)), 1),
    ratio: round(median(rounds.map((r) => r.ratio)), 2),
  };
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
