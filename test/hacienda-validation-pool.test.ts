// The emulator's worker-thread pool: the pooled validator gives the same verdicts as the one on the event loop
// (both run every check: XSD, signature, signer, clave, totals), the DOM-based parse gives the same typed view as
// the fast-xml-parser one, and closing the emulator ends the threads so that a process using it exits by itself.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueComprobante } from '../src/core/comprobante.js';
import { parseDocument } from '../src/core/document.js';
import { loadP12 } from '../src/core/sign/p12.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { parseXmlDocument } from '../src/core/sign/xml-dom.js';
import { signCanonical } from '../src/core/sign/xades.js';
import { buildComprobanteXml } from '../src/core/xml/build.js';
import { parseComprobanteDom, parseComprobanteXml } from '../src/core/xml/parse-comprobante.js';
import { ReceptionClient, resolveEndpoints } from '../src/hacienda/client/index.js';
import { XmllintBinaryValidator } from '../src/adapters/xsd/index.js';
import { CODIGOS, createDefaultValidator, createPooledValidator, startEmulator, type ValidationMeta } from '../src/emulator/index.js';
import { startEmulatorThread } from '../src/emulator/thread.js';
import { BatchingXsd, EmulatorPool } from '../src/emulator/validate.js';
import { makeTestIssuer, type TestIssuer } from './helpers/issuer.js';
import { FAST_RETRY } from './helpers/hacienda.js';

const FIXTURES = new URL('../fixtures/documents/', import.meta.url);
const NAME = '01-fe-servicios-13.json';
const fixture = (name = NAME) => JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as Record<string, unknown>;
const newId = () => randomBytes(8).toString('hex');

let t: TestIssuer;
let seq = 0;
const code = () => String(20_000_000 + seq++).slice(-8);

beforeAll(() => {
  t = makeTestIssuer();
});

function issue(mutate?: (b: Record<string, unknown>) => void, creds = t.creds) {
  const b = fixture();
  (b as { numeroReferencia: number }).numeroReferencia = 7000 + seq;
  mutate?.(b);
  const r = issueComprobante(b, t.issuer, creds, { securityCode: code(), signingTime: new Date(), newId });
  if (!r.ok) throw new Error(JSON.stringify(r.findings));
  return r;
}

function meta(clave: string, fecha: string): ValidationMeta {
  return {
    clave,
    fecha,
    emisor: { tipoIdentificacion: '02', numeroIdentificacion: '3101123456' },
    environment: 'production',
    username: 'cpj-3-101-123456@stag.comprobanteselectronicos.go.cr',
    now: new Date(),
  };
}

describe('pooled validator ≡ validator on the event loop', () => {
  const pooled = createPooledValidator({ threads: 2 });
  const inThread = createDefaultValidator();
  afterAll(async () => {
    await pooled.close();
    await inThread.close();
  });

  it('gives the same verdicts, each with its specific reason, and really runs on the worker threads', async () => {
    const good = issue();
    const tampered = issue();
    const tamperedXml = tampered.xml.replace('Licencia anual', 'Licencia anuaL');
    expect(tamperedXml).not.toBe(tampered.xml);
    const other = loadP12(createTestP12({ id: '3101987654', type: '02', pin: '1234' }), '1234', new Date());
    const foreign = issue(undefined, other);
    const p = parseDocument(fixture(), t.issuer, { securityCode: code() });
    if (!p.ok) throw new Error(JSON.stringify(p.findings));
    const unsignedXml = buildComprobanteXml(p.doc, p.totals);
    const offXml = unsignedXml.replace(/<TotalComprobante>([\d.]+)<\/TotalComprobante>/, (_m, v: string) => `<TotalComprobante>${(Number(v) + 1).toFixed(5)}</TotalComprobante>`);
    expect(offXml).not.toBe(unsignedXml);
    const totalsOff = signCanonical(offXml, t.creds, { signingTime: new Date(), newId });

    const cases = [
      { name: 'good', xml: good.xml, clave: good.doc.clave, fecha: good.doc.fechaEmision, codes: [] as number[] },
      { name: 'tampered', xml: tamperedXml, clave: tampered.doc.clave, fecha: tampered.doc.fechaEmision, codes: [0] },
      { name: 'signed by another taxpayer', xml: foreign.xml, clave: foreign.doc.clave, fecha: foreign.doc.fechaEmision, codes: [CODIGOS.FIRMANTE] },
      { name: 'totals off by one colón', xml: totalsOff, clave: p.doc.clave, fecha: p.doc.fechaEmision, codes: [CODIGOS.TOTALES] },
      { name: 'not well-formed', xml: good.xml.replace('</Clave>', '</Clav>'), clave: good.doc.clave, fecha: good.doc.fechaEmision, codes: [CODIGOS.ESQUEMA] },
    ];
    const before = pooled.pool.completed;
    for (const c of cases) {
      const bytes = Buffer.from(c.xml, 'utf8');
      const m = meta(c.clave, c.fecha);
      const [a, b] = await Promise.all([pooled(bytes, m), inThread(bytes, m)]);
      expect(a, c.name).toEqual(b);
      expect(a.accepted, c.name).toBe(c.codes.length === 0);
      expect([...new Set(a.errors.map((e) => e.codigo))], c.name).toEqual(c.codes);
    }
    expect(pooled.pool.completed - before).toBe(cases.length);
    const tamperedResult = await pooled(Buffer.from(tamperedXml), meta(tampered.doc.clave, tampered.doc.fechaEmision));
    expect(tamperedResult.errors[0]?.mensaje).toMatch(/^La firma del comprobante electrónico no es válida \(reference\[0\]: URI="" \(document\): digest mismatch/);
  });

  it('documents arriving together travel together to the threads, each verdict still its own', async () => {
    const one = createPooledValidator({ threads: 1 });
    try {
      const docs = Array.from({ length: 12 }, (_, i) => {
        const r = issue();
        const xml = i === 5 ? r.xml.replace('Licencia anual', 'Licencia anuaL') : i === 9 ? r.xml.replace('</Clave>', '</Clav>') : r.xml;
        return { xml: Buffer.from(xml), meta: meta(r.doc.clave, r.doc.fechaEmision) };
      });
      const [pooledResults, inThreadResults] = await Promise.all([
        Promise.all(docs.map((d) => one(d.xml, d.meta))),
        Promise.all(docs.map((d) => inThread(d.xml, d.meta))),
      ]);
      expect(pooledResults).toEqual(inThreadResults);
      expect(pooledResults.map((r) => r.accepted)).toEqual(docs.map((_, i) => i !== 5 && i !== 9));
      expect(one.pool.completed).toBe(12);
      expect(one.pool.tasks).toBeLessThan(12);
    } finally {
      await one.close();
    }
  });

  it('if the threads cannot start, documents are analysed on the calling thread with the same verdict', async () => {
    const failures: unknown[] = [];
    const pool = new EmulatorPool(1, (e) => failures.push(e), new URL('./no-such-worker.mjs', import.meta.url).href);
    const broken = createPooledValidator({ pool });
    try {
      pool.warm();
      const good = issue();
      const tampered = issue();
      const tamperedXml = tampered.xml.replace('Licencia anual', 'Licencia anuaL');
      for (const [xml, clave, fecha] of [
        [good.xml, good.doc.clave, good.doc.fechaEmision],
        [tamperedXml, tampered.doc.clave, tampered.doc.fechaEmision],
      ] as const) {
        const m = meta(clave, fecha);
        expect(await broken(Buffer.from(xml), m)).toEqual(await inThread(Buffer.from(xml), m));
      }
      expect(failures).toHaveLength(1);
      expect(pool.usable).toBe(false);
      expect(pool.completed).toBe(0);
    } finally {
      await broken.close();
      await pool.close();
    }
    expect(pool.liveThreads).toBe(0);
  });

  it('an XSD violation is found by the batched xmllint run, in front of the other errors', async () => {
    const p = parseDocument(fixture(), t.issuer, { securityCode: code() });
    if (!p.ok) throw new Error(JSON.stringify(p.findings));
    const xml = buildComprobanteXml(p.doc, p.totals).replace('<CodigoActividadEmisor>6201.0</CodigoActividadEmisor>', '<CodigoActividadEmisor>62010</CodigoActividadEmisor>');
    const signed = signCanonical(xml, t.creds, { signingTime: new Date(), newId });
    const m = meta(p.doc.clave, p.doc.fechaEmision);
    const [a, b] = await Promise.all([pooled(Buffer.from(signed), m), inThread(Buffer.from(signed), m)]);
    expect(a).toEqual(b);
    expect(a.errors.map((e) => e.codigo)).toEqual([CODIGOS.ESQUEMA]);
    expect(a.errors[0]?.mensaje).toContain('CodigoActividadEmisor');
  });
});

describe('one parse for every check', () => {
  it('the DOM-based comprobante view equals the fast-xml-parser one for every fixture', () => {
    const names = readdirSync(FIXTURES).filter((f) => f.endsWith('.json') && !f.endsWith('.expected.json'));
    expect(names.length).toBeGreaterThan(2);
    for (const name of names) {
      const r = issueComprobante(fixture(name), t.issuer, t.creds, { securityCode: code(), signingTime: new Date(), newId });
      if (!r.ok) throw new Error(`${name}: ${JSON.stringify(r.findings)}`);
      const dom = parseXmlDocument(r.xml);
      if (typeof dom === 'string') throw new Error(dom);
      expect(parseComprobanteDom(dom), name).toEqual(parseComprobanteXml(r.xml));
    }
  });

  it('also with prefixes, CDATA, entities, comments and whitespace', () => {
    const r = issue();
    const xml = r.xml
      .replace('<FacturaElectronica xmlns="', '<fe:FacturaElectronica xmlns:fe="')
      .replace(/<(\/?)(Clave|NumeroConsecutivo|CodigoActividadEmisor)>/g, '<$1fe:$2>')
      .replace('</FacturaElectronica>', '</fe:FacturaElectronica>')
      .replace(/<Nombre>([^<]*)<\/Nombre>/, '<Nombre> <![CDATA[$1]]> <!-- comment --> &#x41;&amp;</Nombre>');
    const dom = parseXmlDocument(xml);
    if (typeof dom === 'string') throw new Error(dom);
    const fromDom = parseComprobanteDom(dom);
    expect(fromDom).toEqual(parseComprobanteXml(xml));
    expect(fromDom.clave).toBe(r.doc.clave);
    expect(fromDom.emisor.nombre).toMatch(/A&$/);
  });
});

describe('XSD batches', () => {
  it('documents arriving together share one xmllint run, started from the helper shell, in a folder left empty', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fecr-xsd-test-'));
    const inner = new XmllintBinaryValidator({ persistentShell: true, tempDir: dir });
    const batching = new BatchingXsd(inner, 10);
    try {
      const good = issue().xml;
      const bad = good.replace(/<CodigoActividadEmisor>([\d.]+)<\/CodigoActividadEmisor>/, '<CodigoActividadEmisor>1</CodigoActividadEmisor>');
      expect(bad).not.toBe(good);
      const docs = Array.from({ length: 20 }, (_, i) => (i === 7 ? bad : good));
      const results = await Promise.all(docs.map((d) => batching.validate(d, 'FE')));
      expect(batching.batches).toBe(1);
      expect(results.map((r) => r.valid)).toEqual(docs.map((_, i) => i !== 7));
      expect(results[7]!.errors[0]?.message).toContain('CodigoActividadEmisor');
      expect(readdirSync(dir)).toEqual([]);
      // After close, the next run starts a new shell.
      await inner.close();
      const [again] = await inner.validate(good, 'FE');
      expect(again?.valid).toBe(true);
    } finally {
      await inner.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** POSTs an issued document to the emulator through the Hacienda client; it must be received. */
async function send(rc: ReceptionClient, r: { doc: { clave: string; fechaEmision: string }; xml: string }): Promise<string> {
  const sent = await rc.submit({
    clave: r.doc.clave,
    fecha: r.doc.fechaEmision,
    emisor: { tipoIdentificacion: '02', numeroIdentificacion: '3101123456' },
    comprobanteXml: r.xml,
  });
  expect(sent.status).toBe('received');
  return r.doc.clave;
}

const client = (url: string) =>
  new ReceptionClient({
    endpoints: resolveEndpoints('local', { baseUrl: url }),
    credentials: { username: t.issuer.usuarioHacienda, password: 'secreto' },
    retry: FAST_RETRY,
  });

describe('the emulator with its worker threads', () => {
  const submit = (rc: ReceptionClient) => () => send(rc, issue());

  it('a server starts its threads at once, gives the verdicts on them and ends them on close', async () => {
    const emu = await startEmulator({ processingDelayMs: 0, validationThreads: 2, validationThreadsAtStart: true });
    const rc = client(emu.url);
    try {
      expect(emu.state.workerThreads).toBe(2);
      const clave = await submit(rc)();
      await emu.state.whenIdle();
      const st = await rc.getStatus(clave);
      expect(st.estado).toBe('aceptado');
      expect(st.mensaje?.errores).toEqual([]);
    } finally {
      await rc.close();
      await emu.close();
    }
    expect(emu.state.workerThreads).toBe(0);
  });

  it('by default the threads start only when documents queue up', async () => {
    const emu = await startEmulator({ processingDelayMs: 0, validationThreads: 1 });
    const rc = client(emu.url);
    try {
      const first = await submit(rc)();
      await emu.state.whenIdle();
      expect((await rc.getStatus(first)).estado).toBe('aceptado');
      expect(emu.state.workerThreads).toBe(0); // one document: validated on the event loop
      const many = await Promise.all(Array.from({ length: 8 }, submit(rc)));
      await emu.state.whenIdle();
      expect(emu.state.workerThreads).toBe(1);
      for (const clave of many) expect((await rc.getStatus(clave)).estado).toBe('aceptado');
    } finally {
      await rc.close();
      await emu.close();
    }
    expect(emu.state.workerThreads).toBe(0);
  });

  it('a process that starts and closes the emulator exits on its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fecr-pool-'));
    try {
      const script = join(dir, 'run.mts');
      const entry = new URL('../src/emulator/index.ts', import.meta.url).href;
      writeFileSync(
        script,
        [
          `import { startEmulator } from ${JSON.stringify(entry)};`,
          `const emu = await startEmulator({ validationThreads: 2, validationThreadsAtStart: true });`,
          `const t0 = Date.now();`,
          // Threads are created at start; give them time to come up before closing.
          `while (emu.state.workerThreads < 2 && Date.now() - t0 < 10000) await new Promise((r) => setTimeout(r, 20));`,
          `await new Promise((r) => setTimeout(r, 300));`,
          `console.log('threads', emu.state.workerThreads);`,
          `await emu.close();`,
          `console.log('closed', emu.state.workerThreads);`,
        ].join('\n'),
      );
      const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), script], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const code = await new Promise<number | null>((resolve) => {
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          resolve(-1);
        }, 25_000);
        child.on('exit', (c) => {
          clearTimeout(timer);
          resolve(c);
        });
      });
      expect(code, err).toBe(0);
      expect(out).toContain('threads 2');
      expect(out).toContain('closed 0');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 40_000);
});

describe('the emulator on a worker thread of its own (local mode of a batch)', () => {
  it('gives full-validation verdicts from its thread, keeps its state in the data file, and ends with close()', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fecr-emu-thread-'));
    const dataFile = join(dir, 'emulator.db');
    const good = issue();
    const tampered = issue();
    try {
      const emu = await startEmulatorThread({ dataFile, processingDelayMs: 0 });
      const rc = client(emu.url);
      await send(rc, good);
      await send(rc, { ...tampered, xml: tampered.xml.replace('Licencia anual', 'Licencia anuaL') });
      await emu.whenIdle();
      // whenIdle came back from the thread only once both verdicts were given: no polling needed.
      expect(await emu.pending()).toBe(0);
      const ok = await rc.getStatus(good.doc.clave);
      expect(ok.estado).toBe('aceptado');
      const bad = await rc.getStatus(tampered.doc.clave);
      expect(bad.estado).toBe('rechazado');
      expect(bad.mensaje?.errores.map((e) => e.codigo)).toContain(null);
      await rc.close();
      await emu.close();
      await emu.close(); // idempotent
      // The thread's server is gone.
      await expect(fetch(`${emu.url}/_emulator/health`)).rejects.toThrow();

      // A second thread on the same data file knows both documents (and their verdicts).
      const again = await startEmulatorThread({ dataFile, processingDelayMs: 0 });
      const rc2 = client(again.url);
      try {
        expect((await rc2.getStatus(good.doc.clave)).estado).toBe('aceptado');
        expect((await rc2.getStatus(tampered.doc.clave)).estado).toBe('rechazado');
      } finally {
        await rc2.close();
        await again.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
