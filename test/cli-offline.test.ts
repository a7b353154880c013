// The offline commands, run in-process with injected streams (no global state faked).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ISSUER, validInvoice } from './helpers/bodies.js';
import { runCli, tempDir } from './helpers/cli.js';
import { xmlsecVerify } from './helpers/xmlsec.js';

let dir: string;

beforeAll(async () => {
  dir = tempDir();
  const made = await runCli(['certs', 'create-test', '--id', '3101123456', '--type', '02', '--pin', '1234', '--out', 'issuer.p12', '--name', 'SOFTWARE TICO SOCIEDAD ANONIMA'], { cwd: dir });
  expect(made.code).toBe(0);
  const p12 = readFileSync(join(dir, 'issuer.p12'));
  writeFileSync(join(dir, 'issuer.json'), JSON.stringify({ ...ISSUER, certificadoHacienda: p12.toString('base64') }));
  writeFileSync(join(dir, 'body.json'), JSON.stringify(validInvoice()));
});

describe('fecr (offline commands)', () => {
  it('prints its version and the exit codes', async () => {
    const v = await runCli(['--version']);
    expect(v.code).toBe(0);
    expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const h = await runCli(['help', 'exit-codes']);
    expect(h.stdout).toContain('3  rejected by Hacienda');
    expect(h.stdout).toContain('8  still pending');
  });

  it('unknown commands and missing arguments are usage errors (exit 2), one line, no stack', async () => {
    const r = await runCli(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown command/);
    const m = await runCli(['xml', 'body.json'], { cwd: dir });
    expect(m.code).toBe(2);
    expect(m.stderr).toMatch(/--issuer/);
    for (const out of [r.stderr, m.stderr]) expect(out).not.toMatch(/\n\s+at /);
  });

  it('certs show reads the PIN from stdin and reports the identification', async () => {
    const r = await runCli(['certs', 'show', 'issuer.p12', '--pin-stdin', '--json'], { cwd: dir, stdin: '1234\n' });
    expect(r.code).toBe(0);
    const info = JSON.parse(r.stdout);
    expect(info).toMatchObject({ identificacion: '3101123456', validity: 'valid', hasPrivateKey: true });
    expect(info.subject).toContain('CPJ-3-101-123456');
    const wrong = await runCli(['certs', 'show', 'issuer.p12', '--pin-stdin'], { cwd: dir, stdin: '9999\n' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr.trim().split('\n')).toHaveLength(1);
    expect(wrong.stderr).toMatch(/PIN/i);
  });

  it('validate: exit 0 for a valid body, 1 with one finding per line for an invalid one', async () => {
    const ok = await runCli(['validate', 'body.json', '--issuer', 'issuer.json'], { cwd: dir });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^valid FE 00100001010000000001 totalComprobante 105939\.19500 CRC/);
    const bad = validInvoice();
    bad.detalleServicio[1].impuesto[0].tarifa = '4';
    bad.resumenFactura.totalComprobante = '1.00';
    const r = await runCli(['validate', '-'], { cwd: dir, stdin: JSON.stringify(bad) });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('detalleServicio[1].impuesto[0].tarifa: must be "13" for codigoTarifa 08');
    expect(r.stdout).toContain('resumenFactura.totalComprobante: is 1 but the computed totalComprobante is');
    const j = await runCli(['validate', '-', '--json'], { cwd: dir, stdin: JSON.stringify(bad) });
    expect(JSON.parse(j.stdout)).toMatchObject({ valid: false, findings: expect.arrayContaining([expect.objectContaining({ path: 'detalleServicio[1].impuesto[0].tarifa' })]) });
  });

  it('bad files and bad JSON are one-line errors', async () => {
    const missing = await runCli(['validate', 'nope.json'], { cwd: dir });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('error: nope.json: no such file\n');
    const broken = await runCli(['validate', '-'], { cwd: dir, stdin: '{"emisor": ' });
    expect(broken.code).toBe(1);
    expect(broken.stderr).toBe('error: stdin:1:12: Unexpected end of JSON input\n');
    const badIssuer = await runCli(['xml', 'body.json', '--issuer', 'body.json'], { cwd: dir });
    expect(badIssuer.code).toBe(1);
    expect(badIssuer.stderr).toMatch(/^error: body.json: invalid issuer record: \d+ findings\n  identificacion: is required\n/);
  });

  it('xml signs what verify and xmlsec1 accept; a tampered file fails verify', async () => {
    const r = await runCli(['xml', 'body.json', '--issuer', 'issuer.json', '--out', 'fe.xml', '--json'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.clave).toMatch(/^506150326003101123456001000010100000000011\d{8}$/);
    expect(out.numeroConsecutivo).toBe('00100001010000000001');
    const xml = readFileSync(join(dir, 'fe.xml'), 'utf8');
    expect(xmlsecVerify(xml).ok).toBe(true);
    const v = await runCli(['verify', 'fe.xml'], { cwd: dir });
    expect(v.code, v.stdout).toBe(0);
    expect(v.stdout).toContain('ok    xsd: valid against FE v4.4');
    writeFileSync(join(dir, 'tampered.xml'), xml.replace('<TotalComprobante>105939.19500', '<TotalComprobante>105939.19501'));
    const t = await runCli(['verify', 'tampered.xml', '--json'], { cwd: dir });
    expect(t.code).toBe(1);
    expect(JSON.parse(t.stdout).checks.find((c: { name: string }) => c.name === 'reference[0]').ok).toBe(false);
  });

  it('validate, xml and verify for the kinds of issue 15 (ND, FEC, FEE, REP): valid, signed, the right XSD', async () => {
    const kinds = { ND: '14-nd-ajuste-servicios', FEC: '17-fec-agricultor', FEE: '20-fee-cafe-usd', REP: '23-rep-credito-90-dias' };
    for (const [kind, fixture] of Object.entries(kinds)) {
      const body = new URL(`../fixtures/documents/${fixture}.json`, import.meta.url).pathname;
      const ok = await runCli(['validate', body, '--issuer', 'issuer.json'], { cwd: dir });
      expect([kind, ok.code], ok.stdout + ok.stderr).toEqual([kind, 0]);
      expect(ok.stdout).toMatch(new RegExp(`^valid ${kind} `));
      const x = await runCli(['xml', body, '--issuer', 'issuer.json', '--out', `${kind}.xml`], { cwd: dir });
      expect([kind, x.code], x.stderr).toEqual([kind, 0]);
      const xml = readFileSync(join(dir, `${kind}.xml`), 'utf8');
      expect(xmlsecVerify(xml).ok, kind).toBe(true);
      const v = await runCli(['verify', `${kind}.xml`], { cwd: dir });
      expect([kind, v.code], v.stdout).toEqual([kind, 0]);
      expect(v.stdout).toContain(`ok    xsd: valid against ${kind} v4.4`);
    }
  });

  it('xml without --out writes the XML to stdout and the clave to stderr; invalid bodies write nothing', async () => {
    const r = await runCli(['xml', 'body.json', '--issuer', 'issuer.json'], { cwd: dir });
    expect(r.stdout.startsWith('<?xml version="1.0" encoding="utf-8"?><FacturaElectronica')).toBe(true);
    expect(r.stderr.trim()).toMatch(/^\d{50}$/);
    const bad = validInvoice();
    bad.receptor = '';
    const b = await runCli(['xml', '-', '--issuer', 'issuer.json'], { cwd: dir, stdin: JSON.stringify(bad) });
    expect(b.code).toBe(1);
    expect(b.stdout).toBe('');
    expect(b.stderr).toContain('receptor: must be a receiver object');
  });
});
