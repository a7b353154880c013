// Issue 37.3 and 37.4: `fecr archive verify` checks who signed each file, every manifest field against the signed
// XML and the entry names, and reads an archive in bounded memory and time. Each forged archive below is one a
// forger can make (tar-stream + zlib, real .p12s of core/sign/testcert.ts); each must exit 1 naming the file and why.
// The export is a demo profile's (env local: Hacienda's answers are the local emulator's, signed under fecr's test root).
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import tar from 'tar-stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatCr } from '../src/core/dates.js';
import { loadP12 } from '../src/core/sign/p12.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { signXmlDocument } from '../src/core/sign/xades.js';
import type { ManifestLine } from '../src/service/archive.js';
import { verifyArchive } from '../src/service/archive-verify.js';
import { BIN } from './helpers/bin.js';
import { runCli, tempDir } from './helpers/cli.js';
import { childEnv } from './helpers/hermetic-env.js';
import { createHash } from 'node:crypto';

let home: string;
let work: string;
let archive: string;
let files: Map<string, Buffer>;
let manifest: ManifestLine[];
const env = () => ({ HOME: home, FECR_NO_KEYCHAIN: '1' });
const PIN = '1234';

async function entries(file: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const extract = tar.extract();
  extract.on('entry', (h, s, next) => {
    const c: Buffer[] = [];
    s.on('data', (b: Buffer) => c.push(b));
    s.on('end', () => (out.set(h.name, Buffer.concat(c)), next()));
  });
  await pipeline(createReadStream(file), createGunzip(), extract);
  return out;
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/**
 * A forged archive: the export's files with `change` applied (a new content for a name, or extra entries), and the
 * manifest made to agree with the new bytes (sha256 and size), then `lines` applied to it: what a forger writes.
 */
async function forge(
  name: string,
  opts: { change?: Record<string, Buffer>; extra?: Array<{ name: string; data: Buffer; pax?: Record<string, string> }>; lines?: (l: ManifestLine[]) => ManifestLine[] },
): Promise<string> {
  const out = join(home, `${name}.tar.gz`);
  const pack = tar.pack();
  const written = pipeline(pack, createGzip(), createWriteStream(out));
  let lines = manifest.map((l) => {
    const data = opts.change?.[l.file];
    return data ? { ...l, sha256: sha(data), size: data.length } : l;
  });
  for (const [file, data] of files) {
    if (file === 'manifest.jsonl') continue;
    const d = opts.change?.[file] ?? data;
    await new Promise<void>((res, rej) => pack.entry({ name: file, size: d.length }, d, (e) => (e ? rej(e) : res())));
  }
  for (const x of opts.extra ?? []) {
    await new Promise<void>((res, rej) => pack.entry({ name: x.name, size: x.data.length, ...(x.pax ? { pax: x.pax } : {}) }, x.data, (e) => (e ? rej(e) : res())));
    lines.push({ ...manifest[0]!, file: x.pax?.path ?? x.name, sha256: sha(x.data), size: x.data.length });
  }
  if (opts.lines) lines = opts.lines(lines);
  const m = Buffer.from(lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  pack.entry({ name: 'manifest.jsonl', size: m.length }, m);
  pack.finalize();
  await written;
  return out;
}

/** The signed XML without its signature, signed again with another .p12 (its key and certificate). */
function resign(xml: string, p12: Buffer, edit: (unsigned: string) => string = (x) => x): Buffer {
  const unsigned = edit(xml.replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, ''));
  const creds = loadP12(p12, PIN, new Date());
  return Buffer.from(signXmlDocument(unsigned, creds, { signingTime: new Date(), newId: () => 'f' + Math.random().toString(16).slice(2) }));
}

async function verify(file: string) {
  return runCli(['archive', 'verify', file], { env: env(), cwd: work });
}

beforeAll(async () => {
  home = tempDir('fecr-archive-forged-');
  work = join(home, 'work');
  const demo = await runCli(['demo', '--json'], { env: env(), cwd: work });
  expect(demo.code, demo.stderr).toBe(0);
  const month = formatCr(new Date()).slice(0, 7);
  archive = join(home, 'month.tar.gz');
  const r = await runCli(['archive', 'export', '--profile', 'demo', '--no-pdf', '--since', `${month}-01`, '--until', formatCr(new Date()).slice(0, 10), archive], { env: env(), cwd: work });
  expect(r.code, r.stderr).toBe(0);
  files = await entries(archive);
  manifest = files
    .get('manifest.jsonl')!
    .toString('utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as ManifestLine);
}, 60_000);

const sale = (role: string, estado?: string) => manifest.find((l) => l.side === 'ventas' && l.role === role && (estado === undefined || l.estado === estado))!;

describe('fecr archive verify: who signed (37.3)', () => {
  it("the export of a local profile verifies, naming the local emulator's anchor", async () => {
    const v = await verify(archive);
    expect(v.stderr).toBe('');
    expect(v.code).toBe(0);
    expect(manifest.every((l) => l.env === 'local')).toBe(true);
    expect(v.stdout).toMatch(/the local emulator's answers \(env local: of no fiscal validity\): signed under the trust anchor CA PERSONA JURIDICA - PRUEBAS FECR \(fecr test root \(env local\)\)/);
  });

  it('a rejection turned into Aceptado, re-signed with a self-signed "MINISTERIO DE HACIENDA" certificate → exit 1 naming it', async () => {
    const rejected = manifest.find((l) => l.side === 'ventas' && l.role === 'respuesta_hacienda' && l.estado === 'rechazado') ?? sale('respuesta_hacienda');
    const xml = files.get(rejected.file)!.toString('utf8');
    const seal = createTestP12({ id: '2100042005', type: '02', pin: PIN, selfSigned: true, name: 'MINISTERIO DE HACIENDA (SELLO ELECTRONICO)' });
    const forged = resign(xml, seal, (x) => x.replace(/<Mensaje>\d<\/Mensaje>/, '<Mensaje>1</Mensaje>'));
    const dir = rejected.file.replace(/respuesta-hacienda\.xml$/, '');
    const file = await forge('seal', { change: { [rejected.file]: forged }, lines: (ls) => ls.map((l) => (l.file.startsWith(dir) ? { ...l, estado: 'aceptado' } : l)) });
    const v = await verify(file);
    expect(v.code).toBe(1);
    expect(v.stderr).toContain(`  ${rejected.file}: not signed by who must sign it: a certificate named as Hacienda's seal that does not chain to a trust anchor`);
    expect(v.stderr).toMatch(new RegExp(`  ${rejected.file}: signature does not verify \\(certificate.chain: not issued by a trusted CA: the signing certificate "MINISTERIO DE HACIENDA \\(SELLO ELECTRONICO\\)" is self-signed`));
  });

  it("the sandbox's seal (PRUEBAS), whose CAs fecr does not ship: a warning in an archive of env sandbox, a refusal in another", async () => {
    const seal = createTestP12({ id: '2100042005', type: '02', pin: PIN, selfSigned: true, name: 'MINISTERIO DE HACIENDA (SELLO ELECTRONICO)(PRUEBAS)' });
    const answers = [...files.keys()].filter((f) => f.endsWith('.xml') && files.get(f)!.toString('utf8').includes('<MensajeHacienda'));
    expect(answers.length).toBeGreaterThan(1);
    const change = Object.fromEntries(answers.map((f) => [f, resign(files.get(f)!.toString('utf8'), seal)]));
    const sandbox = await forge('sandbox-seal', { change, lines: (ls) => ls.map((l) => ({ ...l, env: 'sandbox' })) });
    const ok = await verify(sandbox);
    expect(ok.code, ok.stderr).toBe(0);
    const warned = ok.stderr.trim().split('\n');
    expect(warned).toHaveLength(answers.length);
    for (const l of warned) expect(l).toMatch(/^warning: \S+respuesta[\w-]*\.xml: Hacienda's sandbox seal \(.*\(PRUEBAS\).*\) not chained: the sandbox's CAs are not shipped \(--trust FILE\|DIR adds them\); a sandbox answer has no fiscal validity$/);
    // The same answers in the archive of env local: not that environment's verdicts.
    const local = await forge('sandbox-seal-local', { change });
    const v = await verify(local);
    expect(v.code).toBe(1);
    expect(v.stderr).toContain(`: signed by Hacienda's sandbox seal (PRUEBAS), in an archive whose manifest says env local: not a verdict of that environment`);
  });

  it("Hacienda's answer re-signed by a taxpayer's certificate that chains (fecr's test root) → not Hacienda's seal", async () => {
    const mh = sale('respuesta_hacienda');
    const other = createTestP12({ id: '3101999999', type: '02', pin: PIN });
    const file = await forge('taxpayer-seal', { change: { [mh.file]: resign(files.get(mh.file)!.toString('utf8'), other) } });
    const v = await verify(file);
    expect(v.code).toBe(1);
    expect(v.stderr).toContain(`  ${mh.file}: not signed by who must sign it: a MensajeHacienda signed by CN=EMPRESA DE PRUEBA SOCIEDAD ANONIMA`);
  });

  it("the local emulator's answers in an archive that says env production → refused", async () => {
    const file = await forge('env-production', { lines: (ls) => ls.map((l) => ({ ...l, env: 'production' as const })) });
    const v = await verify(file);
    expect(v.code).toBe(1);
    expect(v.stderr).toContain(`  ${sale('respuesta_hacienda').file}: signed by fecr's local emulator (trust anchor: fecr's test root), in an archive whose manifest says env production: not Hacienda's answer`);
  });

  it('a comprobante with a changed total, re-signed by another taxpayer → not the Emisor', async () => {
    const c = sale('comprobante');
    const other = createTestP12({ id: '3101999999', type: '02', pin: PIN });
    const forged = resign(files.get(c.file)!.toString('utf8'), other, (x) => x.replace(/<TotalComprobante>[^<]*<\/TotalComprobante>/, '<TotalComprobante>1.00000</TotalComprobante>'));
    const file = await forge('other-taxpayer', { change: { [c.file]: forged }, lines: (ls) => ls.map((l) => (l.clave === c.clave && l.side === 'ventas' ? { ...l, totalComprobante: '1.00000' } : l)) });
    const v = await verify(file);
    expect(v.code).toBe(1);
    expect(v.stderr).toMatch(new RegExp(`  ${c.file}: not signed by who must sign it: signed with the certificate of CPJ-3-101-999999, not of the Emisor \\d+`));
  });

  it('manifest rows whose estado, total or kind are false → each named', async () => {
    const accepted = sale('comprobante', 'aceptado');
    const other = manifest.find((l) => l.side === 'ventas' && l.role === 'comprobante' && l.clave !== accepted.clave)!;
    const third = manifest.find((l) => l.side === 'ventas' && l.role === 'comprobante' && l.clave !== accepted.clave && l.clave !== other.clave)!;
    const file = await forge('rows', {
      lines: (ls) =>
        ls.map((l) =>
          l.file === accepted.file ? { ...l, estado: 'rechazado' } : l.file === other.file ? { ...l, totalComprobante: '1.00000' } : l.file === third.file ? { ...l, kind: third.kind === 'TE' ? 'FE' : 'TE' } : l,
        ),
    });
    const v = await verify(file);
    expect(v.code).toBe(1);
    expect(v.stderr).toContain(`  ${accepted.file}: the manifest's estado rechazado is not what ventas/${accepted.clave}/respuesta-hacienda.xml says (Mensaje 1: aceptado)`);
    expect(v.stderr).toContain(`  ${other.file}: the manifest differs from the signed comprobante: totalComprobante 1.00000 (the comprobante's is `);
    expect(v.stderr).toMatch(new RegExp(`  ${third.file}: the manifest differs from the signed comprobante: kind (TE|FE) \\(the comprobante is ${third.kind}\\)`));
  });

  it('entries named ../../x.xml, /abs/x.xml or with a PAX ../ path → refused by name', async () => {
    const xml = files.get(sale('comprobante').file)!;
    const long = `../${'a'.repeat(120)}.xml`;
    const file = await forge('names', {
      extra: [
        { name: '../../x.xml', data: xml },
        { name: '/abs/x.xml', data: xml },
        { name: 'pax.xml', data: xml, pax: { path: long } },
      ],
    });
    const v = await verify(file);
    expect(v.code).toBe(1);
    expect(v.stderr).toContain('  ../../x.xml: refused: the name ../../x.xml climbs out of the archive (..)');
    expect(v.stderr).toContain('  /abs/x.xml: refused: the name /abs/x.xml is absolute');
    expect(v.stderr).toMatch(/ {2}\.\.\/a{117}… \(127 characters\): refused: the name \.\.\/a{117}… \(127 characters\) climbs out of the archive/);
    expect(v.stderr).not.toMatch(/a{121}/); // a long name is never echoed whole
  });

  it('fecr verify FILE: a comprobante signed by another taxpayer is not "signature valid"', async () => {
    const c = sale('comprobante');
    const other = createTestP12({ id: '3101999999', type: '02', pin: PIN });
    const dir = tempDir('fecr-verify-signer-');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, 'ok.xml'), files.get(c.file)!);
    writeFileSync(join(dir, 'other.xml'), resign(files.get(c.file)!.toString('utf8'), other));
    const ok = await runCli(['verify', 'ok.xml', '--no-xsd'], { env: env(), cwd: dir });
    expect(ok.code, ok.stdout).toBe(0);
    expect(ok.stdout).toMatch(/ok {4}signer\.party: the Emisor \d+ signed it/);
    const bad = await runCli(['verify', 'other.xml', '--no-xsd'], { env: env(), cwd: dir });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/FAIL {2}signer\.party: signed with the certificate of CPJ-3-101-999999, not of the Emisor \d+/);
    expect(bad.stderr).toContain('verification failed');
    // The local emulator's answer: Hacienda's only with --env local (fecr's test root), and said so.
    writeFileSync(join(dir, 'mh.xml'), files.get(sale('respuesta_hacienda').file)!);
    const prod = await runCli(['verify', 'mh.xml', '--no-xsd'], { env: env(), cwd: dir });
    expect(prod.code).toBe(1);
    expect(prod.stdout).toMatch(/FAIL {2}certificate\.chain: not issued by a trusted CA/);
    const local = await runCli(['verify', 'mh.xml', '--no-xsd', '--env', 'local'], { env: env(), cwd: dir });
    expect(local.code, local.stdout).toBe(0);
    expect(local.stdout).toContain('trust anchor: CA PERSONA JURIDICA - PRUEBAS FECR (fecr test root (env local))');
    // The sandbox's seal (PRUEBAS), whose CAs fecr does not ship: with --env sandbox a note, not a failure; a
    // production verifier still refuses it.
    const seal = createTestP12({ id: '2100042005', type: '02', pin: PIN, selfSigned: true, name: 'MINISTERIO DE HACIENDA (SELLO ELECTRONICO)(PRUEBAS)' });
    writeFileSync(join(dir, 'mh-pruebas.xml'), resign(files.get(sale('respuesta_hacienda').file)!.toString('utf8'), seal));
    const sandbox = await runCli(['verify', 'mh-pruebas.xml', '--no-xsd', '--env', 'sandbox'], { env: env(), cwd: dir });
    expect(sandbox.code, sandbox.stdout).toBe(0);
    expect(sandbox.stdout).toContain("note  Hacienda's sandbox seal not chained: the sandbox's CAs are not shipped");
    expect(sandbox.stdout).toContain("ok    signer.party: Hacienda's sandbox seal (PRUEBAS), its chain not judged");
    expect((await runCli(['verify', 'mh-pruebas.xml', '--no-xsd'], { env: env(), cwd: dir })).code).toBe(1);
  });
});

/** A .tar.gz of `entries`, each a name and a generator of its bytes (streamed: nothing held). */
async function bigArchive(file: string, list: Array<{ name: string; size: number; chunks: () => AsyncIterable<Buffer> }>): Promise<void> {
  const pack = tar.pack();
  const written = pipeline(pack, createGzip({ level: 9 }), createWriteStream(file));
  for (const e of list) {
    await new Promise<void>((res, rej) => {
      const entry = pack.entry({ name: e.name, size: e.size }, (err) => (err ? rej(err) : res()));
      Readable.from(e.chunks()).pipe(entry);
    });
  }
  pack.finalize();
  await written;
}

/** `node bin/fecr.js archive verify FILE` under /usr/bin/time: exit code, stderr and the child's peak RSS (MB). */
function spawnVerify(file: string): Promise<{ code: number | null; stderr: string; rssMb: number }> {
  const rssFile = `${file}.rss`;
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', '%M', '-o', rssFile, process.execPath, BIN, 'archive', 'verify', file], { cwd: work, env: childEnv(env()), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stderr, rssMb: Number(readFileSync(rssFile, 'utf8').trim().split('\n').pop()) / 1024 }));
  });
}

describe('fecr archive verify: bounded memory and time (37.4)', () => {
  // 150 MB: the bound; fecr verify's own baseline (node, the bundle, SQLite, xmllint's shell) is about 70 MB.
  const RSS_MB = 150;

  it('an entry that inflates to 1 GiB → refused by name from its header, under 150 MB RSS (spawned bin/fecr.js)', async () => {
    const file = join(home, 'bomb.tar.gz');
    const mib = Buffer.alloc(1 << 20);
    await bigArchive(file, [
      {
        name: 'ventas/x/comprobante.pdf',
        size: 1024 * mib.length,
        chunks: async function* () {
          for (let i = 0; i < 1024; i++) yield mib;
        },
      },
    ]);
    const r = await spawnVerify(file);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('  ventas/x/comprobante.pdf: 1073741824 bytes, over the 33554432-byte cap of a file in an archive: the rest of the archive is not read');
    expect(r.rssMb).toBeLessThan(RSS_MB);
  }, 60_000);

  it('240 XML entries of 2 MB each, just under the cap (480 MB inflated) → read and refused one by one, under 150 MB RSS', async () => {
    const file = join(home, 'many.tar.gz');
    const ns = 'https://cdn.comprobanteselectronicos.go.cr/xml-schemas/v4.4/facturaElectronica';
    const head = Buffer.from(`<?xml version="1.0" encoding="utf-8"?><FacturaElectronica xmlns="${ns}">`);
    const tail = Buffer.from('</FacturaElectronica>');
    const fill = Buffer.alloc(1 << 20, 0x20);
    const size = head.length + 2 * fill.length - 4096 + tail.length;
    await bigArchive(
      file,
      Array.from({ length: 240 }, (_, i) => ({
        name: `ventas/${i}/comprobante.xml`,
        size,
        chunks: async function* () {
          yield head;
          yield fill;
          yield fill.subarray(0, fill.length - 4096);
          yield tail;
        },
      })),
    );
    const r = await spawnVerify(file);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('  ventas/239/comprobante.xml: signature does not verify');
    expect(r.stderr).toContain('  manifest.jsonl: missing');
    expect(r.rssMb).toBeLessThan(RSS_MB);
  }, 120_000);

  it('a 300 MB manifest line without a newline → refused within 2 s', async () => {
    const file = join(home, 'line.tar.gz');
    const mib = Buffer.alloc(1 << 20, 0x61);
    await bigArchive(file, [
      {
        name: 'manifest.jsonl',
        size: 300 * mib.length,
        chunks: async function* () {
          for (let i = 0; i < 300; i++) yield mib;
        },
      },
    ]);
    // 2 s is the bound; the check stops after 4 KiB of the line (milliseconds): the rest is headroom for a loaded machine.
    const t = Date.now();
    const r = await verifyArchive(file);
    expect(Date.now() - t).toBeLessThan(2000);
    expect(r.ok).toBe(false);
    expect(r.problems).toContainEqual({ file: 'manifest.jsonl', message: 'line 1 is longer than 4096 bytes (fecr writes about 400): not read further' });
  }, 60_000);

  it('a 2 MB PAX header → refused before tar-stream buffers it', async () => {
    const file = join(home, 'pax.tar.gz');
    const pack = tar.pack();
    const written = pipeline(pack, createGzip(), createWriteStream(file));
    pack.entry({ name: 'x.xml', size: 1, pax: { comment: 'a'.repeat(2 * 1024 * 1024) } } as tar.Headers, Buffer.from('x'));
    pack.finalize();
    await written;
    const r = await verifyArchive(file);
    expect(r.ok).toBe(false);
    expect(r.problems[0]!.message).toMatch(/cannot be read as a \.tar\.gz: a tar pax-header entry of \d+ bytes \(over 1048576\): fecr writes none; not read/);
  });
});
