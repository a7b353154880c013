/**
 * Receptor-mail benchmark (issue 17): 1 000 accepted documents mailed to a local SMTP server. The documents are first
 * sent and accepted by the embedded emulator with mail off (not timed); then each gets its mail queued as the verdict
 * would queue it (queueAcceptedMail), and a worker delivers them: the XML and MensajeHacienda as stored, the PDF
 * rendered, nodemailer's pooled SMTP transport to smtp-server running in a child process (its own CPU share). Timed:
 * from the start of that worker until every mail is `enviado`. Counts what the server received (distinct Message-IDs).
 * Usage: node --import tsx bench/email.ts [documents] (BENCH_CONCURRENCY, default 16; BENCH_RENDER_THREADS=n: render
 * on n mail threads, email-render-pool.ts MailRenderThread, instead of the worker's own thread as fecr serve does).
 * Issue 31: the mail floor (bench/mail-floor.ts: CPU per mail of the PDF render + MIME build, alone, one process, no
 * I/O) is measured in the same run, first, in its own process; beside it this run's own wall and CPU per mail (this
 * process: store, render, SMTP client; the SMTP server's CPU apart) and the ratio
 * wall ÷ (mailFloor × mails ÷ min(cores, render threads)), target ≤ 1.5. (Issue 17's target was ≤ 30 s.)
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pino } from 'pino';
import { createAccount } from '../src/service/accounts.js';
import { queueAcceptedMail } from '../src/service/delivery/email.js';
import { MailRenderThread } from '../src/service/delivery/email-render-pool.js';
import { startWorker } from '../src/service/delivery/worker.js';
import { submitDocument } from '../src/service/documents.js';
import { registerIssuer } from '../src/service/issuers.js';
import { openService } from '../src/service/runtime.js';
import { validInvoice } from '../test/helpers/bodies.js';
import { makeTestIssuer } from '../test/helpers/issuer.js';
import { pidTreeCpuMs } from './proc-cpu.js';

const N = Number(process.argv[2] ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const RENDER_THREADS = Number(process.env.BENCH_RENDER_THREADS ?? 0);
const cores = os.cpus().length;

// The mail floor, in the same minutes, in its own process (its CPU its own), before anything else runs.
const floorRun = spawnSync(process.execPath, ['--import', 'tsx', new URL('./mail-floor.ts', import.meta.url).pathname, String(Math.min(N, Number(process.env.BENCH_FLOOR_MAILS ?? 300)))], {
  encoding: 'utf8',
  maxBuffer: 1 << 24,
});
if (floorRun.status !== 0) throw new Error(`mail floor: ${floorRun.stderr}`);
const floor = JSON.parse(floorRun.stdout) as { mailFloorMsPerMail: number; wallMsPerMail: number; bytesPerMail: number };
const dir = mkdtempSync(join(os.tmpdir(), 'fecr-bench-email-'));
const r2 = (x: number) => Math.round(x * 100) / 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The SMTP server: smtp-server in a child process; it prints its port, then on SIGTERM the Message-IDs it received.
const SERVER = `
import { SMTPServer } from 'smtp-server';
const ids = [];
const s = new SMTPServer({ authOptional: true, disabledCommands: ['STARTTLS', 'AUTH'], size: 50 * 1024 * 1024, logger: false,
  onData(stream, _session, cb) { const chunks = []; stream.on('data', (c) => chunks.push(c));
    stream.on('end', () => { const m = /^Message-ID:\\s*(<[^>]+>)/im.exec(Buffer.concat(chunks).toString('latin1')); ids.push(m ? m[1] : ''); cb(null, 'Ok'); }); } });
s.listen(0, '127.0.0.1', () => console.log(s.server.address().port));
process.on('SIGTERM', () => { console.log(JSON.stringify(ids)); process.exit(0); });
`;
const server = spawn(process.execPath, ['--input-type=module', '-e', SERVER], { cwd: new URL('..', import.meta.url).pathname, stdio: ['ignore', 'pipe', 'inherit'] });
const lines = createInterface({ input: server.stdout! });
const output: string[] = [];
const firstLine = new Promise<string>((resolve) => lines.once('line', resolve));
const port = Number(await firstLine);
lines.on('line', (l) => output.push(l));

const opened = await openService({ dataDir: join(dir, 'data'), env: { FECR_NO_KEYCHAIN: '1' }, emulatorDelayMs: 20, logger: pino({ level: 'warn' }), mail: false });
const ctx = opened.ctx;
const { account } = await createAccount(ctx, { base: 'bench', password: 'password-123' });
await registerIssuer(ctx, account.id, { ...makeTestIssuer().issuer });
for (let i = 1; i <= N; i++) await submitDocument(ctx, account.id, { ...validInvoice(), numeroReferencia: i });
const accepting = startWorker(ctx, { concurrency: 16, pollIntervalMs: 10, firstPollDelayMs: 50, pollMaxIntervalMs: 200 });
const count = async (sql: 'aceptado' | 'enviado') =>
  sql === 'aceptado'
    ? Number((await ctx.store.db.selectFrom('documents').select((eb) => eb.fn.countAll<number>().as('n')).where('state', '=', 'aceptado').executeTakeFirstOrThrow()).n)
    : Number((await ctx.store.db.selectFrom('email_deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('state', '=', 'enviado').executeTakeFirstOrThrow()).n);
while ((await count('aceptado')) < N) await sleep(100);
await accepting.stop();

// The mails, queued as the verdict queues them, then delivered by a worker.
ctx.mail = { outboxDir: join(dir, 'outbox'), smtp: { host: '127.0.0.1', port, security: 'none' }, fromAddress: 'facturas@fecr.test' };
const docs = await ctx.store.db.selectFrom('documents').select(['id', 'account_id', 'clave', 'correos', 'xml']).execute();
const now = Date.now();
await ctx.store.db.transaction().execute(async (trx) => {
  for (const d of docs) await queueAcceptedMail(ctx, trx, now, d);
});
const renderer = RENDER_THREADS > 0 ? new MailRenderThread(RENDER_THREADS) : undefined;
if (renderer) {
  // The threads warmed before the clock starts, as fecr serve's would be after its first mails.
  renderer.warm();
  await sleep(2000);
}
const smtpCpu0 = pidTreeCpuMs(server.pid!);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const mailer = startWorker(ctx, { concurrency: CONCURRENCY, pollIntervalMs: 10, emailConnections: 8, ...(renderer ? { mailRenderer: renderer } : {}) });
let sent = 0;
while ((sent = await count('enviado')) < docs.length) {
  if (performance.now() - t0 > 120_000) break;
  await sleep(50);
}
const seconds = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
const smtpCpuMs = pidTreeCpuMs(server.pid!) - smtpCpu0;
await mailer.stop();
await renderer?.close();
server.kill('SIGTERM');
await new Promise((r) => server.once('exit', r));
const received = JSON.parse(output.at(-1) ?? '[]') as string[];
const failed = Number((await ctx.store.db.selectFrom('email_deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('state', '!=', 'enviado').executeTakeFirstOrThrow()).n);
await opened.close();
rmSync(dir, { recursive: true, force: true });
console.log(
  JSON.stringify({
    documents: N,
    mails: docs.length,
    enviado: sent,
    notSent: failed,
    received: received.length,
    distinctMessageIds: new Set(received).size,
    seconds: Number(seconds.toFixed(2)),
    mailsPerSecond: Number((sent / seconds).toFixed(1)),
    serviceCpuSeconds: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)),
    concurrency: CONCURRENCY,
    smtpConnections: 8,
    renderThreads: RENDER_THREADS > 0 ? RENDER_THREADS : '1 (the worker\'s own)',
    cores,
    loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100),
    mailFloorMsPerMail: floor.mailFloorMsPerMail,
    mailFloorBytesPerMail: floor.bytesPerMail,
    wallMsPerMail: r2((seconds * 1000) / docs.length),
    cpuMsPerMail: r2((cpu.user + cpu.system) / 1000 / docs.length),
    smtpServerCpuMsPerMail: r2(smtpCpuMs / docs.length),
    cpuOverFloor: r2((cpu.user + cpu.system) / 1000 / docs.length / floor.mailFloorMsPerMail),
    // Issue 31: wall ≤ 1.5 × (mail floor × mails ÷ min(cores, render threads)).
    wallOverFloorBound: r2((seconds * 1000) / ((floor.mailFloorMsPerMail * docs.length) / Math.min(cores, Math.max(1, RENDER_THREADS)))),
    target: { wallOverFloorBound: 1.5 },
    ok: sent === N && (seconds * 1000) / ((floor.mailFloorMsPerMail * docs.length) / Math.min(cores, Math.max(1, RENDER_THREADS))) <= 1.5,
  }),
);
process.exit(0);
