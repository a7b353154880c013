// Issue 29 (must show 4): `fecr archive export` of the demo's month (sales with Hacienda's answers and PDFs, purchases
// with our MensajeReceptor and Hacienda's answers to them) → `fecr archive verify` exits 0; the same archive rewritten
// with one byte changed in one file (each kind of file in turn) → verify exits 1 naming that file; a file added or
// one taken out → named too.
import { createReadStream, createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import tar from 'tar-stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatCr } from '../src/core/dates.js';
import type { ManifestLine } from '../src/service/archive.js';
import { runCli, tempDir } from './helpers/cli.js';

let home: string;
let work: string;
let archive: string;
const env = () => ({ HOME: home, FECR_NO_KEYCHAIN: '1' });

/** Copies a .tar.gz entry by entry, `change` deciding each entry's new bytes (null: left out); `extra` appended. */
async function rewrite(from: string, to: string, change: (name: string, data: Buffer) => Buffer | null, extra?: { name: string; data: Buffer }): Promise<void> {
  const extract = tar.extract();
  const pack = tar.pack();
  extract.on('entry', (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const data = change(header.name, Buffer.concat(chunks));
      if (data === null) return next();
      pack.entry({ ...header, size: data.length }, data, next);
    });
  });
  extract.on('finish', () => {
    if (extra) pack.entry({ name: extra.name, size: extra.data.length }, extra.data);
    pack.finalize();
  });
  await Promise.all([pipeline(createReadStream(from), createGunzip(), extract), pipeline(pack, createGzip(), createWriteStream(to))]);
}

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

beforeAll(async () => {
  home = tempDir('fecr-archive-');
  work = join(home, 'work');
  const demo = await runCli(['demo', '--json'], { env: env(), cwd: work });
  expect(demo.code, demo.stderr).toBe(0);
  const month = formatCr(new Date()).slice(0, 7);
  archive = join(home, 'month.tar.gz');
  const r = await runCli(['archive', 'export', '--profile', 'demo', '--since', `${month}-01`, '--until', formatCr(new Date()).slice(0, 10), archive], { env: env(), cwd: work });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/^archived 9 sales and \d+ received documents: \d+ files, \d+ bytes in /);
}, 60_000);

describe('fecr archive', () => {
  it('export writes every file with its manifest line; verify exits 0', async () => {
    const files = await entries(archive);
    const manifest = files
      .get('manifest.jsonl')!
      .toString('utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as ManifestLine);
    expect(manifest.length).toBe(files.size - 1);
    const roles = new Set(manifest.map((m) => `${m.side}/${m.role}`));
    for (const r of ['ventas/comprobante', 'ventas/respuesta_hacienda', 'ventas/pdf', 'compras/comprobante', 'compras/mensaje_receptor', 'compras/mensaje_receptor_respuesta_hacienda']) expect(roles).toContain(r);
    for (const m of manifest) {
      expect(m.clave).toMatch(/^\d{50}$/);
      expect(files.get(m.file)!.length).toBe(m.size);
    }
    expect(manifest.find((m) => m.role === 'pdf')!.totalComprobante).toMatch(/^\d+\.\d{5}$/);
    const v = await runCli(['archive', 'verify', archive], { env: env(), cwd: work });
    expect(v.stderr).toBe('');
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/^ok: \d+ files match the manifest; \d+ signatures verify; \d+ documents valid against their XSD/);
  });

  it('one byte changed in any kind of file → verify exits 1 naming it', async () => {
    const names = [...(await entries(archive)).keys()];
    const pick = (suffix: string, side: string) => names.find((n) => n.startsWith(side) && n.endsWith(suffix))!;
    for (const target of [pick('/comprobante.xml', 'ventas'), pick('/comprobante.pdf', 'ventas'), pick('/respuesta-hacienda.xml', 'ventas'), pick('/mensaje-receptor.xml', 'compras'), pick('/comprobante.xml', 'compras')]) {
      const bad = join(home, 'bad.tar.gz');
      await rewrite(archive, bad, (name, data) => {
        if (name !== target) return data;
        const copy = Buffer.from(data);
        const at = Math.floor(copy.length / 2);
        copy[at] = copy[at]! ^ 0x01;
        return copy;
      });
      const v = await runCli(['archive', 'verify', bad], { env: env(), cwd: work });
      expect(v.code, target).toBe(1);
      expect(v.stderr).toContain(`  ${target}: sha256 `);
      expect(v.stderr.split('\n')[0]).toMatch(/^error: .*bad\.tar\.gz: \d+ difference/);
    }
  }, 30_000);

  it('a file added, a file taken out, the manifest missing → each named', async () => {
    const names = [...(await entries(archive)).keys()];
    const gone = names.find((n) => n.endsWith('.pdf'))!;
    const bad = join(home, 'bad2.tar.gz');
    await rewrite(archive, bad, (name, data) => (name === gone ? null : data), { name: 'ventas/extra.txt', data: Buffer.from('x') });
    const v = await runCli(['archive', 'verify', bad], { env: env(), cwd: work });
    expect(v.code).toBe(1);
    expect(v.stderr).toContain(`  ${gone}: listed in the manifest, missing from the archive`);
    expect(v.stderr).toContain('  ventas/extra.txt: in the archive, not in the manifest');
    await rewrite(archive, bad, (name, data) => (name === 'manifest.jsonl' ? null : data));
    const m = await runCli(['archive', 'verify', bad], { env: env(), cwd: work });
    expect(m.code).toBe(1);
    expect(m.stderr).toContain('  manifest.jsonl: missing');
  }, 30_000);

  it('bad flags: a usage error, no file', async () => {
    const r = await runCli(['archive', 'export', '--profile', 'demo', '--since', '2026-13-01', '--until', '2026-11-30', join(home, 'x.tar.gz')], { env: env(), cwd: work });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--since must be a date YYYY-MM-DD');
    const g = await runCli(['archive', 'verify', join(home, 'none.tar.gz')], { env: env(), cwd: work });
    expect(g.code).toBe(1);
    expect(g.stderr).toMatch(/^error: cannot read /);
  });
});
