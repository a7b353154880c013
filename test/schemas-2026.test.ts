// The April-2026 XSDs are in force (issue 19): CodigoReferencia 13–16 and TipoDocIR 19/20 validate and are
// accepted end to end, 17 belongs to the recibo de pago only, the ten currencies the revision removed are refused,
// and a clave with letters (ClaveType [a-zA-Z0-9]{50}) is a clave.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isClave, parseClave } from '../src/core/clave.js';
import { KINDS, SCHEMA_SET } from '../src/core/xml/kinds.js';
import { SCHEMAS_DIR } from '../src/core/xsd/schemas.js';
import { fixtureBody } from './helpers/api-context.js';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const dir = tempDir('fecr-2026-');
const env = { HOME: dir, FECR_NO_KEYCHAIN: '1', FECR_DATA_DIR: join(dir, 'data'), FECR_MASTER_KEY: Buffer.alloc(32, 9).toString('base64') };
const fecr = (args: string[]) => runCli(args, { cwd: dir, env });
const FEE_CLAVE = '50605032600310112345600100001090000000102148213570';

function nc(codigo: string, tipoDocIR: string, n: number): Record<string, any> {
  const body = fixtureBody('09-nc-devolucion');
  body.numeroReferencia = n;
  body.informacionReferencia[0] = { ...body.informacionReferencia[0], tipoDocIR, numero: FEE_CLAVE, codigo };
  return body;
}

beforeAll(async () => {
  mkdirSync(dir, { recursive: true });
  const issuer = makeTestIssuer().issuer;
  writeFileSync(join(dir, 'issuer.json'), JSON.stringify(issuer));
  const r = await fecr(['emisor', 'register', 'issuer.json']);
  expect(r.code, r.stderr).toBe(0);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the schema set in force', () => {
  it('is the April-2026 set for every kind and both messages', () => {
    expect(SCHEMA_SET).toBe('2026/v4.4');
    for (const k of Object.values(KINDS)) expect(k.xsdFile.startsWith('2026/v4.4/')).toBe(true);
    // Byte-exact copies of the official files (sha256 in shared/reference/hacienda/xsd/SOURCES.md).
    const sha = (f: string) => execFileSync('sha256sum', [join(SCHEMAS_DIR, SCHEMA_SET, f)]).toString().slice(0, 12);
    expect(sha('FacturaElectronica_V4.4.xsd')).toBe('926ba81325bc');
    expect(sha('NotaCreditoElectronica_V4.4.xsd')).toBe('b7ed3347c559');
    expect(sha('MensajeHacienda_V4.4.xsd')).toBe('b2606156042b');
  });
});

describe('an NC with the 2026 codes', () => {
  it.each(['13', '14', '15', '16'])('CodigoReferencia %s with TipoDocIR 19: validate clean, XSD-valid against the 2026 file', async (codigo) => {
    const file = `nc-${codigo}.json`;
    writeFileSync(join(dir, file), JSON.stringify(nc(codigo, '19', 700 + Number(codigo))));
    const v = await fecr(['validate', file, '--issuer', 'issuer.json']);
    expect(v.code, v.stdout + v.stderr).toBe(0);
    const x = await fecr(['xml', file, '--issuer', 'issuer.json', '--out', `nc-${codigo}.xml`]);
    expect(x.code, x.stderr).toBe(0);
    const xml = readFileSync(join(dir, `nc-${codigo}.xml`), 'utf8');
    expect(xml).toContain(`<Codigo>${codigo}</Codigo>`);
    expect(xml).toContain('<TipoDocIR>19</TipoDocIR>');
    // The independent validator, on the 2026 file itself.
    const out = execFileSync('xmllint', ['--noout', '--schema', join(SCHEMAS_DIR, '2026/v4.4/NotaCreditoElectronica_V4.4.xsd'), join(dir, `nc-${codigo}.xml`)], { stdio: ['ignore', 'pipe', 'pipe'] });
    expect(out.toString()).toBe('');
  });

  it('CodigoReferencia 16 with TipoDocIR 20 is aceptado through fecr send --wait (local mode)', async () => {
    writeFileSync(join(dir, 'nc-send.json'), JSON.stringify(nc('16', '20', 799)));
    const r = await fecr(['send', 'nc-send.json', '--wait', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ estado: 'aceptado' });
  });

  it('CodigoReferencia 17 is for the recibo de pago only; 18 is no code', async () => {
    writeFileSync(join(dir, 'nc-17.json'), JSON.stringify(nc('17', '01', 800)));
    const r = await fecr(['validate', 'nc-17.json', '--issuer', 'issuer.json']);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain('informacionReferencia[0].codigo: "17" (Pago a comprobante electrónico) is only for a recibo electrónico de pago');
    writeFileSync(join(dir, 'nc-18.json'), JSON.stringify(nc('18', '01', 801)));
    expect((await fecr(['validate', 'nc-18.json', '--issuer', 'issuer.json'])).stdout).toContain('informacionReferencia[0].codigo: is not a known código de referencia');
  });
});

describe('currencies and claves', () => {
  it('refuses the ten currency codes the 2026 revision removed (XAU, XAG, …)', async () => {
    for (const code of ['XAU', 'XAG', 'XXX']) {
      const body = fixtureBody('08-fe-usd');
      body.resumenFactura.codigoTipoMoneda.codigoMoneda = code;
      writeFileSync(join(dir, `fe-${code}.json`), JSON.stringify(body));
      const r = await fecr(['validate', `fe-${code}.json`, '--issuer', 'issuer.json', '--no-xsd']);
      expect(r.code).toBe(1);
      expect(r.stdout).toContain('resumenFactura.codigoTipoMoneda.codigoMoneda: is not a currency code of the v4.4 schema');
    }
  });

  it('a clave with letters is a clave and parses', () => {
    const clave = '506' + '050326' + '00A1B2C3D4E5' + '00100001010000000102' + '1' + 'ABCD1234';
    expect(clave).toHaveLength(50);
    expect(isClave(clave)).toBe(true);
    expect(parseClave(clave)).toMatchObject({ day: 5, month: 3, year2: 26, identificacion: 'A1B2C3D4E5', consecutivo: '00100001010000000102', situacion: '1', codigoSeguridad: 'ABCD1234' });
    expect(isClave('5'.repeat(49) + '-')).toBe(false);
  });

  it('status and download take a clave with letters (unknown here, so "no document")', async () => {
    const r = await fecr(['status', '506' + '050326' + '00A1B2C3D4E5' + '00100001010000000102' + '1' + 'ABCD1234']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no document/);
    expect(r.stderr).not.toMatch(/must be the 50/);
  });
});
