// One tenant cannot stall the API for everyone (issue 25, point 9): a real client API on 127.0.0.1:0 (real store,
// tokens, emulator), one account posting 8 received comprobantes of ~0.9 MB at once and downloading the PDF of a
// 1 000-line document while another account asks for its document's state every 20 ms. The event loop's delay
// (perf_hooks.monitorEventLoopDelay) stays under 100 ms and the cheap request is answered within 250 ms, both beyond
// what the machine alone does to an idle event loop at the same time (other work shares this machine); on the event
// loop (before) a 0.9 MB document blocked it 0.25–0.6 s, the PDF 0.7–1.5 s (measured: max delay 687 ms, the cheap
// request up to 1.07 s). The answers are those of the caller's thread: the same analysis of good and bad documents,
// the same import results, byte-identical PDFs; a final document's PDF is rendered once; threads that cannot start
// leave the work to the caller's thread; an account's heavy requests take turns, the excess gets 429 + Retry-After.
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { AccountGate, GATE_MESSAGE } from '../src/server/account-gate.js';
import { buildApiApp } from '../src/server/api-app.js';
import { HttpError } from '../src/server/errors.js';
import { createAccount } from '../src/service/accounts.js';
import { getDocument, submitDocument } from '../src/service/documents.js';
import { ServiceThreads } from '../src/service/heavy-work.js';
import { registerIssuer } from '../src/service/issuers.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { ensureSigningKey } from '../src/service/keys.js';
import { closeLookups } from '../src/service/lookups.js';
import { renderPdf } from '../src/service/pdf.js';
import { analyzeFile, type FileToAnalyze } from '../src/service/recibidos/analyze.js';
import { importRecibidos, type ImportResult } from '../src/service/recibidos/import.js';
import { recibidosTrust } from '../src/service/recibidos/trust.js';
import { createTokenVerifier, issueToken } from '../src/service/tokens.js';
import { makeServiceContext, type TestContext } from './helpers/api-context.js';
import { largeInvoiceBody, largeSupplierXmls, type LargeSupplierXml } from './helpers/heavy-docs.js';
import { makeTestIssuer } from './helpers/issuer.js';

const AUTH_URL = 'http://auth.fecr.test';
const BUYER = { tipo: '02', numero: '3101123456', nombre: 'SOFTWARE TICO SOCIEDAD ANONIMA' };
const BASES = ['pesada', 'liviana', 'control'] as const;
type Base = (typeof BASES)[number];
/** Each account's issuer: pesada is the buyer of the suppliers' files (BUYER). */
const CEDULAS: Record<Base, string> = { pesada: '3101123456', liviana: '3101654321', control: '3101765432' };
let twin: TestContext;
let twinAccount: number;

let emu: RunningEmulator;
let t: TestContext;
let heavy: ServiceThreads;
let app: ReturnType<typeof buildApiApp>;
let baseUrl: string;
const tokens = {} as Record<Base, string>;
const ids = {} as Record<Base, number>;
/** The 1 000-line document, pendiente (its PDF rendered at every download) and aceptado (rendered once). */
let bigPendiente: string;
let bigAceptado: string;
let smallClave: string;
let nextNumero = 1;
/** The documents of the load test's (last) run and their answers. */
let loaded: { docs: LargeSupplierXml[]; results: ImportResult[] } | undefined;

async function post(path: string, body: unknown, token: string, url = baseUrl): Promise<{ status: number; body: any; headers: Record<string, unknown>; ms: number }> {
  const t0 = performance.now();
  const res = await request(url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined, headers: res.headers, ms: performance.now() - t0 };
}

const uploadBody = (d: LargeSupplierXml, nombre: string) => JSON.stringify({ xml: Buffer.from(d.xml).toString('base64'), nombre });
const freshDocs = (count: number, lines = 1000) => {
  const docs = largeSupplierXmls(count, BUYER, lines, nextNumero);
  nextNumero += count;
  return docs;
};
/** An import result without what differs between two imports of the same file (row id, first or not, file name). */
const sameness = ({ id: _i, creado: _c, archivo: _a, ...r }: ImportResult) => r;

/**
 * The machine's share of an event-loop delay: an idle event loop (a thread of this process, nothing to do but its
 * timer) measured over the same time. On a machine busy with other work the scheduler alone delays a loop by tens of
 * milliseconds; what the service's own work adds is the delay beyond this one's.
 */
function controlLoop(): { start(): void; stop(): Promise<{ maxMs: number; p99Ms: number }>; close(): Promise<number> } {
  const w = new Worker(
    `const { parentPort } = require('node:worker_threads');
     const h = require('node:perf_hooks').monitorEventLoopDelay({ resolution: 10 });
     parentPort.on('message', (m) => {
       if (m === 'start') { h.reset(); h.enable(); }
       else { h.disable(); parentPort.postMessage({ maxMs: h.max / 1e6, p99Ms: h.percentile(99) / 1e6 }); }
     });`,
    { eval: true },
  );
  return {
    start: () => w.postMessage('start'),
    stop: () => new Promise((resolve) => (w.once('message', resolve), w.postMessage('stop'))),
    close: () => w.terminate(),
  };
}

beforeAll(async () => {
  emu = await startEmulator({ processingDelayMs: 10, validationThreads: 0 });
  t = await makeServiceContext({ haciendaUrl: emu.url });
  await ensureSigningKey(t.ctx);
  const issuer = makeTestIssuer();
  for (const base of BASES) {
    ids[base] = (await createAccount(t.ctx, { base: `empresa-${base}`, password: `contrasena-${base}-123` })).account.id;
    tokens[base] = (await issueToken(t.ctx, { base: `empresa-${base}` }, { issuer: AUTH_URL })).token;
    // Each account a taxpayer of its own (issue 36: one cédula numbers in one account of a service); pesada is the buyer.
    const cedula = CEDULAS[base];
    const p12 = cedula === issuer.issuer.identificacion ? issuer.p12 : createTestP12({ id: cedula, type: '02', pin: issuer.issuer.pinCertificado, name: issuer.issuer.nombre });
    await registerIssuer(t.ctx, ids[base], { ...issuer.issuer, identificacion: cedula, certificadoHacienda: p12.toString('base64') });
  }
  // The buyer again, in a store of its own: the same files imported there on the caller's thread.
  twin = await makeServiceContext({ haciendaUrl: emu.url });
  twinAccount = (await createAccount(twin.ctx, { base: 'empresa-gemela', password: 'contrasena-gemela-123' })).account.id;
  await registerIssuer(twin.ctx, twinAccount, issuer.issuer);
  bigPendiente = (await submitDocument(t.ctx, ids.pesada, largeInvoiceBody(1000, 1))).clave;
  bigAceptado = (await submitDocument(t.ctx, ids.pesada, largeInvoiceBody(1000, 2))).clave;
  smallClave = (await submitDocument(t.ctx, ids.liviana, { ...largeInvoiceBody(2, 1), emisor: CEDULAS.liviana })).clave;
  await t.ctx.store.db.updateTable('documents').set({ state: 'aceptado', decided_at: Date.now() }).where('clave', '=', bigAceptado).execute();
  // The app's threads are the test's, to see where the work was done; otherwise the app as `fecr serve` builds it.
  heavy = new ServiceThreads();
  app = buildApiApp(t.ctx, { authenticate: createTokenVerifier(t.ctx, { issuer: AUTH_URL, jwks: 'local' }), heavyWork: heavy });
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
}, 120_000);

afterAll(async () => {
  await app?.close();
  await heavy?.close();
  await closeLookups(t.ctx);
  await t?.close();
  await twin?.close();
  await emu?.close();
});

describe('one account loads the API, another is still answered', () => {
  // Timing on a shared machine: a second try when another process took the CPU (the code before fails every try).
  it("8 × 0.9 MB /api/recibidos and a 1 000-line PDF at once: the event loop's delay stays under 100 ms, /api/consultar/estado under 250 ms (beyond the machine's own delay)", { retry: 2, timeout: 120_000 }, async () => {
    const docs = freshDocs(8);
    const bodies = docs.map((d, i) => uploadBody(d, `grande-${i}.xml`));
    expect(bodies[0]!.length).toBeGreaterThan(1_100_000);
    // A first cheap request and a first PDF: the routes, the store and the threads started, as on a service that has
    // run for a while. (From the sources a thread starts through tsx's loader, slower than the build's; the build's
    // first heavy load, threads starting on the way, is bench/event-loop.ts's `cold`.)
    expect((await post('/api/consultar/estado', { claveHacienda: smallClave }, tokens.liviana)).status).toBe(200);
    expect((await post('/api/consultar/archivo', { claveHacienda: smallClave, fileType: 'PDF' }, tokens.liviana)).status).toBe(200);

    const eld = monitorEventLoopDelay({ resolution: 10 });
    const control = controlLoop();
    const cheap: number[] = [];
    let loading = true;
    const cheapLoop = (async () => {
      while (loading) {
        const r = await post('/api/consultar/estado', { claveHacienda: smallClave }, tokens.liviana);
        expect(r.status).toBe(200);
        expect(r.body.data.clave).toBe(smallClave);
        cheap.push(r.ms);
        await sleep(20);
      }
    })();
    eld.enable();
    control.start();
    const t0 = performance.now();
    const [pdf, ...imports] = await Promise.all([
      post('/api/consultar/archivo', { claveHacienda: bigPendiente, fileType: 'PDF' }, tokens.pesada),
      ...bodies.map((b) => post('/api/recibidos', b, tokens.pesada)),
    ]);
    const loadMs = performance.now() - t0;
    loading = false;
    await cheapLoop;
    eld.disable();
    const machine = await control.stop();
    await control.close();

    const sorted = [...cheap].sort((a, b) => a - b);
    const figures = {
      loadMs: Math.round(loadMs),
      maxDelayMs: Math.round(eld.max / 1e6),
      p99DelayMs: Math.round(eld.percentile(99) / 1e6),
      cheapRequests: cheap.length,
      cheapMaxMs: Math.round(sorted.at(-1)!),
      cheapP50Ms: Math.round(sorted[Math.floor(sorted.length / 2)]!),
      idleLoopMaxMs: Math.round(machine.maxMs),
      idleLoopP99Ms: Math.round(machine.p99Ms),
    };
    console.log('event loop under load', figures);
    // On a quiet machine the idle loop's max is ≈ 10–20 ms and these are the plain bounds (100 ms, 250 ms).
    expect(eld.max / 1e6 - machine.maxMs, JSON.stringify(figures)).toBeLessThan(100);
    expect(sorted.at(-1)! - machine.maxMs, JSON.stringify(figures)).toBeLessThan(250);
    expect(cheap.length).toBeGreaterThan(5);

    expect(pdf!.status).toBe(200);
    expect(Buffer.from(pdf!.body.data.encodedFile, 'base64').subarray(0, 5).toString('latin1')).toBe('%PDF-');
    for (const [i, r] of imports.entries()) {
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.data[0]).toMatchObject({ clave: docs[i]!.clave, estado: 'pendiente', creado: true, hallazgos: [] });
    }
    loaded = { docs, results: imports.map((r) => r.body.data[0] as ImportResult) };
  });
});

describe('the same answers as on the caller’s thread', () => {
  it('the 8 imports through the API: the results of the same files imported on the caller’s thread (another account)', async () => {
    expect(loaded, 'the load test ran').toBeDefined();
    expect(heavy.stats.filesOnThreads).toBeGreaterThanOrEqual(8);
    const here = await importRecibidos(twin.ctx, twinAccount, loaded!.docs.map((d, i) => ({ name: `grande-${i}.xml`, bytes: Buffer.from(d.xml) })));
    expect(loaded!.results.map(sameness)).toEqual(here.map(sameness));
    expect(here.every((r) => r.creado && r.estado === 'pendiente')).toBe(true);
  });

  it('good and bad files: the analysis on a thread is the caller’s thread’s, finding for finding', async () => {
    const threads = new ServiceThreads({ threads: 1, minBytes: 0 });
    try {
      const [big] = freshDocs(1);
      const [small] = freshDocs(1, 2);
      const limit = 4 * 1024 * 1024;
      const files: FileToAnalyze[] = [
        { bytes: Buffer.from(big!.xml) },
        // A line's quantity changed after signing: the digest and the totals no longer agree.
        { bytes: Buffer.from(big!.xml.replace(/<Cantidad>(\d+)/, (_m, n: string) => `<Cantidad>${Number(n) + 1}`)) },
        { bytes: Buffer.from(small!.xml) },
        { bytes: Buffer.from(small!.xml.replace('<NumeroConsecutivo>', '<!-- x --><NumeroConsecutivo>').replace(/<Detalle>[^<]*/, '<Detalle>Otro')) },
        { bytes: Buffer.from([0xff, 0xfe, 0x3c, 0x00]) },
        { bytes: Buffer.from('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>') },
        { bytes: Buffer.from('<FacturaElectronica><Clave></FacturaElectronica>') },
        { bytes: Buffer.from('<a/>'), size: limit + 1 },
      ];
      const now = new Date();
      // The service's trust store (env local: fecr's test root, which signs the test suppliers) crosses to the thread.
      const trust = recibidosTrust(t.ctx);
      const onThread = await threads.analyzeReceived(files, limit, now, trust);
      const here = files.map((f) => analyzeFile(f, limit, now, trust));
      expect(onThread).toEqual(here);
      expect(threads.stats).toMatchObject({ filesOnThreads: files.length, filesHere: 0 });
      expect(here[0]!.text).toBe(big!.xml);
      expect(here.map((a) => a.findings.length > 0)).toEqual([false, true, false, true, true, true, true, true]);
      // Without anchors nothing is trusted, on a thread as here.
      const untrusted = await threads.analyzeReceived(files.slice(0, 1), limit, now);
      expect(untrusted).toEqual([analyzeFile(files[0]!, limit, now)]);
      expect(untrusted[0]!.findings.map((f) => f.path)).toContain('ds:Signature (certificate.chain)');
    } finally {
      await threads.close();
    }
  });

  it('the PDF of the 1 000-line document: byte for byte the caller’s thread’s; a final document’s rendered once, a pendiente one each time', async () => {
    const before = { ...heavy.stats, hits: heavy.pdfCacheHits };
    const download = async (clave: string) => {
      const r = await post('/api/consultar/archivo', { claveHacienda: clave, fileType: 'pdf' }, tokens.pesada);
      expect(r.status).toBe(200);
      return Buffer.from(r.body.data.encodedFile, 'base64');
    };
    // Twice at once (one render), then once more (from memory).
    const [a1, a2] = await Promise.all([download(bigAceptado), download(bigAceptado)]);
    const a3 = await download(bigAceptado);
    const p1 = await download(bigPendiente);
    const aceptado = await renderPdf(undefined, (await getDocument(t.ctx, ids.pesada, bigAceptado))!);
    const pendiente = await renderPdf(undefined, (await getDocument(t.ctx, ids.pesada, bigPendiente))!);
    expect(aceptado.length).toBeGreaterThan(50_000);
    for (const pdf of [a1, a2, a3]) expect(pdf.equals(aceptado)).toBe(true);
    expect(p1.equals(pendiente)).toBe(true);
    expect(heavy.stats.pdfsOnThreads - before.pdfsOnThreads).toBe(2); // the aceptado once, the pendiente once
    expect(heavy.pdfCacheHits - before.hits).toBe(1);
    expect(heavy.stats.pdfsHere).toBe(0);
    // Another account cannot have it, kept or not.
    const other = await post('/api/consultar/archivo', { claveHacienda: bigAceptado, fileType: 'PDF' }, tokens.liviana);
    expect(other.status).toBe(404);
  });

  it('threads that cannot start: the work is done on the caller’s thread, the same answers, the failure said once', async () => {
    const failures: unknown[] = [];
    const broken = new ServiceThreads({ workerFile: new URL('./no-such-worker.js', import.meta.url).href, onError: (e) => failures.push(e) });
    try {
      const [doc] = freshDocs(1);
      const files = [{ bytes: Buffer.from(doc!.xml) }];
      const now = new Date();
      const trust = recibidosTrust(t.ctx);
      expect(await broken.analyzeReceived(files, 4 << 20, now, trust)).toEqual(files.map((f) => analyzeFile(f, 4 << 20, now, trust)));
      expect(await broken.analyzeReceived(files, 4 << 20, now, trust)).toEqual(files.map((f) => analyzeFile(f, 4 << 20, now, trust)));
      const row = (await getDocument(t.ctx, ids.pesada, bigPendiente))!;
      expect((await broken.documentPdf(row)).equals(await renderPdf(undefined, row))).toBe(true);
      expect(broken.stats).toMatchObject({ filesOnThreads: 0, filesHere: 2, pdfsOnThreads: 0, pdfsHere: 1 });
      expect(failures).toHaveLength(1);
    } finally {
      await broken.close();
    }
  });
});

describe('an account’s heavy requests take turns', () => {
  it('over the API: 1 at once and 1 waiting → the third is a 429 with Retry-After in the spec’s error body; another account is served; the slots come back', async () => {
    const gate = new AccountGate({ perAccount: 1, queue: 1 });
    const small = buildApiApp(t.ctx, { authenticate: createTokenVerifier(t.ctx, { issuer: AUTH_URL, jwks: 'local' }), heavyWork: heavy, heavyPerAccount: gate });
    const url = await small.listen({ host: '127.0.0.1', port: 0 });
    try {
      const docs = freshDocs(4);
      const first = post('/api/recibidos', uploadBody(docs[0]!, 'uno.xml'), tokens.pesada, url);
      const second = post('/api/recibidos', uploadBody(docs[1]!, 'dos.xml'), tokens.pesada, url);
      for (let i = 0; i < 500 && gate.load(ids.pesada).waiting < 1; i++) await sleep(5);
      expect(gate.load(ids.pesada)).toEqual({ running: 1, waiting: 1 });
      const third = await post('/api/recibidos', uploadBody(docs[2]!, 'tres.xml'), tokens.pesada, url);
      expect(third.status).toBe(429);
      expect(third.headers['retry-after']).toBe('2');
      expect(third.body).toEqual({ error: 'too_many_requests', message: GATE_MESSAGE });
      const pdf = await post('/api/consultar/archivo', { claveHacienda: bigPendiente, fileType: 'PDF' }, tokens.pesada, url);
      expect(pdf.status).toBe(429);
      // Another account's import goes through meanwhile.
      const control = await post('/api/recibidos', uploadBody(docs[3]!, 'cuatro.xml'), tokens.control, url);
      expect(control.status).toBe(200);
      expect((await first).status).toBe(200);
      expect((await second).status).toBe(200);
      expect(gate.load(ids.pesada)).toEqual({ running: 0, waiting: 0 });
      // A small import and a cached PDF take their turn like any other: nothing is left held.
      expect((await post('/api/recibidos', uploadBody(docs[2]!, 'tres.xml'), tokens.pesada, url)).status).toBe(200);
      expect((await post('/api/consultar/archivo', { claveHacienda: bigAceptado, fileType: 'PDF' }, tokens.pesada, url)).status).toBe(200);
      expect(gate.load(ids.pesada)).toEqual({ running: 0, waiting: 0 });
    } finally {
      await small.close();
    }
  }, 120_000);

  /** A response as the gate sees it: finished or closed. */
  const response = () => Object.assign(new EventEmitter(), { writableFinished: false, destroyed: false }) as unknown as ServerResponse & EventEmitter;
  const refusal = (e: unknown) => e instanceof HttpError && e.statusCode === 429 && e.headers?.['retry-after'] === '3';

  it('the gate: in order of arrival; a slot comes back when the response ends or its connection closes; a client gone while waiting leaves the queue; too long a wait is a 429', async () => {
    const gate = new AccountGate({ perAccount: 2, queue: 2, maxWaitMs: 60_000, retryAfterSeconds: 3 });
    const [r1, r2, r3, r4, r5] = [response(), response(), response(), response(), response()];
    await gate.hold(1, r1);
    await gate.hold(1, r2);
    const order: string[] = [];
    const w3 = gate.hold(1, r3).then(() => order.push('r3'));
    const w4 = gate.hold(1, r4).then(() => order.push('r4'));
    await expect(gate.hold(1, r5)).rejects.toSatisfy(refusal); // the queue is full
    await gate.hold(2, response()); // another account: its own slots
    expect(gate.load(1)).toEqual({ running: 2, waiting: 2 });
    r1.emit('finish');
    r1.emit('close'); // once only
    await w3;
    expect(gate.load(1)).toEqual({ running: 2, waiting: 1 });
    r2.emit('close'); // the connection closed before the answer
    await w4;
    expect(order).toEqual(['r3', 'r4']);
    // r6 waits, then its client leaves: r3's slot goes to nobody.
    const r6 = response();
    const w6 = gate.hold(1, r6);
    r6.emit('close');
    await expect(w6).rejects.toSatisfy(refusal);
    expect(gate.load(1)).toEqual({ running: 2, waiting: 0 });
    r3.emit('finish');
    r4.emit('finish');
    expect(gate.load(1)).toEqual({ running: 0, waiting: 0 });

    const quick = new AccountGate({ perAccount: 1, queue: 4, maxWaitMs: 30, retryAfterSeconds: 3 });
    const q1 = response();
    await quick.hold(1, q1);
    await expect(quick.hold(1, response())).rejects.toSatisfy(refusal);
    expect(quick.load(1)).toEqual({ running: 1, waiting: 0 });
    q1.emit('finish');
    expect(quick.load(1)).toEqual({ running: 0, waiting: 0 });
  });
});
