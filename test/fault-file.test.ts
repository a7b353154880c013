// The fault file (issue 28, docs/faults.md): one zod schema (src/emulator/faults.ts) read by `fecr hacienda serve
// --faults`, a local profile's `emulatorFaults` and `fecr test --faults`; schemas/faults.schema.json is made from it;
// rejections by predicate (numeroReferencia, emisor, kind, a line's Detalle) instead of by clave; a bad file is its
// findings with their field paths, never a stack trace.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { faultFileJsonSchema, FaultFileError, parseFaultFile } from '../src/emulator/faults.js';
import { forcedItems, rejectRuleSchema } from '../src/emulator/reject-rules.js';
import { TEXTOS } from '../src/core/rules/hacienda-codes.js';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { validInvoice } from './helpers/bodies.js';

const SCHEMA_FILE = new URL('../schemas/faults.schema.json', import.meta.url);
const DOCS = new URL('../docs/faults.md', import.meta.url);

/** The ```json blocks of docs/faults.md that are fault files (the ones with a `"$schema"` or fault fields). */
function docExamples(): unknown[] {
  const md = readFileSync(DOCS, 'utf8');
  return [...md.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!) as unknown);
}

function findingsOf(text: string): { path: string; message: string }[] {
  try {
    parseFaultFile(text, 'f.json');
  } catch (e) {
    if (e instanceof FaultFileError) return e.findings;
    throw e;
  }
  throw new Error('parsed');
}

describe('the fault file: one schema', () => {
  it('schemas/faults.schema.json is the JSON schema of the zod schema (regenerate: npx tsx scripts/faults-schema.ts)', () => {
    expect(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8'))).toEqual(faultFileJsonSchema());
  });

  it("docs/faults.md's examples are valid by the shipped JSON schema (ajv, draft 2020-12) and by the zod schema", () => {
    const validate = new Ajv2020({ strict: false }).compile(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as object);
    const examples = docExamples();
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const ex of examples) {
      expect(validate(ex), JSON.stringify(validate.errors)).toBe(true);
      expect(() => parseFaultFile(JSON.stringify(ex), 'docs')).not.toThrow();
    }
    // The JSON schema refuses what the zod schema refuses, field by field.
    expect(validate({ errorRate: 1.5 })).toBe(false);
    expect(validate({ reject: [{ numeroReferencia: 3, codigo: '54' }] })).toBe(false);
    expect(validate({ reject: [{ kind: 'XX' }] })).toBe(false);
    expect(validate({ lostResponseRat: 0.2 })).toBe(false);
  });

  it("the issue's example parses; codes and kinds are normalised", () => {
    const f = parseFaultFile('{"errorRate": 0.3, "lostResponseRate": 0.2, "indexDelayMs": 2000, "quotaPerMinute": 5, "reject": [{"numeroReferencia": 3}, {"detalleContains": "RECHAZAR", "codigo": "-54"}, {"kind": "4"}]}', 'f.json');
    expect(f).toEqual({
      faults: { errorRate: 0.3, lostResponseRate: 0.2, indexDelayMs: 2000, quotaPerMinute: 5, reject: [{ numeroReferencia: 3 }, { detalleContains: 'RECHAZAR', codigo: -54 }, { kind: 'TE' }] },
    });
    expect(parseFaultFile('\uFEFF{"seed": 7, "$schema": "../schemas/faults.schema.json"}', 'f.json')).toEqual({ faults: {}, seed: 7 });
  });

  it('a bad file: one finding per field, at its path', () => {
    expect(findingsOf('{"errorRate": 2, "reject": [{"codigo": "54", "numeroReferencia": 1}, {"kind": "XX"}, {"codigo": -54}], "lostResponseRat": 0.2}')).toEqual([
      { path: 'errorRate', message: 'must be a number from 0 to 1' },
      { path: 'reject[0].codigo', message: 'must be a negative code such as "-54"' },
      { path: 'reject[1].kind', message: 'must be a kind (FE, ND, NC, TE, FEC, FEE, REP) or a tipoDoc (1, 2, 3, 4, 8, 9, 10)' },
      { path: 'reject[2]', message: 'needs at least one of numeroReferencia, emisor, kind, detalleContains, clave' },
      { path: 'lostResponseRat', message: 'unknown field; did you mean "lostResponseRate"?' },
    ]);
    expect(findingsOf('{"errorRate": 0.6, "dropRate": 0.5}')).toEqual([{ path: 'errorRate', message: 'errorRate + rateLimitRate + dropRate must be at most 1' }]);
    expect(findingsOf('{"errorRate": 0.3,}')[0]).toMatchObject({ path: '(file)', message: expect.stringMatching(/^not JSON: /) });
    expect(findingsOf('[]')).toEqual([{ path: '(file)', message: 'must be an object' }]);
  });
});

describe('rules by predicate (reject-rules.ts)', () => {
  // 506 150326 003101123456 001 00001 01 0000000003 1 74195003: FE number 3 of 3101123456.
  const FE3 = '50615032600310112345600100001010000000003174195003';
  const TE3 = '50615032600310112345600100001040000000003174195003';
  const rules = (r: unknown[]) => r.map((x) => rejectRuleSchema.parse(x));

  it('every predicate of a rule must hold; the code defaults to -54 with its text; one item per matching rule', () => {
    const r = rules([{ numeroReferencia: 3, kind: 'FE' }, { emisor: '003101123456', kind: 4, codigo: -99, mensaje: 'Otro motivo' }, { detalleContains: 'rechazar' }]);
    expect(forcedItems(r, { clave: FE3, detalles: ['Servicio'] })).toEqual([{ codigo: -54, mensaje: TEXTOS.impuesto54, fila: 0, columna: 0 }]);
    expect(forcedItems(r, { clave: TE3, detalles: ['Servicio'] })).toEqual([{ codigo: -99, mensaje: 'Otro motivo', fila: 0, columna: 0 }]);
    // The Detalle match ignores letter case; a document whose XML could not be read has no lines to match.
    expect(forcedItems(r, { clave: TE3, detalles: ['Línea a RECHAZAR'] }).map((i) => i.codigo)).toEqual([-99, -54]);
    expect(forcedItems(rules([{ detalleContains: 'x' }]), { clave: FE3 })).toEqual([]);
    // aviso: listed as a warning.
    expect(forcedItems(rules([{ numeroReferencia: 3, codigo: '-37', aviso: true }]), { clave: FE3 })).toEqual([{ codigo: -37, mensaje: TEXTOS.ubicacion37, fila: 0, columna: 0, aviso: true }]);
    expect(forcedItems(rules([{ numeroReferencia: 4 }, { emisor: '310112345' }]), { clave: FE3 })).toEqual([]);
  });
});

describe('a local profile with emulatorFaults (fecr send --wait against its embedded emulator)', () => {
  const dir = tempDir('fecr-fault-file-');
  const env = { HOME: dir, FECR_NO_KEYCHAIN: '1' };
  const fecr = (args: string[]) => runCli(args, { env, cwd: dir });
  const send = async (body: Record<string, unknown>, name: string) => {
    writeFileSync(join(dir, name), JSON.stringify(body));
    const r = await fecr(['send', name, '--wait', '--json']);
    return { code: r.code, stderr: r.stderr, status: JSON.parse(r.stdout || '{}') as { estado?: string; errores?: { codigo: number; mensaje: string; aviso: boolean }[] } };
  };

  beforeAll(async () => {
    writeFileSync(
      join(dir, 'faults.json'),
      JSON.stringify({
        reject: [
          { numeroReferencia: 3, codigo: '-99', mensaje: 'La numeración consecutiva ya existe (regla de prueba)' },
          { detalleContains: 'RECHAZAR', codigo: '-54' },
          { kind: '4', emisor: '3101123456' },
          { numeroReferencia: 5, codigo: -37, aviso: true },
        ],
      }),
    );
    writeFileSync(join(dir, 'issuer.json'), JSON.stringify(makeTestIssuer().issuer));
    const set = await fecr(['config', 'set', `dataDir=${join(dir, 'data')}`, 'emulatorFaults=faults.json']);
    expect(set.code, set.stderr).toBe(0);
    // Stored as an absolute path: the profile works from any directory.
    expect((await fecr(['config', 'get', 'emulatorFaults'])).stdout.trim()).toBe(join(dir, 'faults.json'));
    expect((await fecr(['emisor', 'register', 'issuer.json'])).code).toBe(0);
  }, 60_000);

  it('numeroReferencia 3 is rejected with the code and text the rule gives', async () => {
    const r = await send({ ...validInvoice(), numeroReferencia: 3 }, 'n3.json');
    expect(r.code, r.stderr).toBe(3);
    expect(r.status.estado).toBe('rechazado');
    expect(r.status.errores).toEqual([{ codigo: -99, mensaje: 'La numeración consecutiva ya existe (regla de prueba)', fila: null, columna: null, aviso: false }]);
    expect(r.stderr).toContain('rechazado: -99 La numeración consecutiva ya existe (regla de prueba)');
  }, 30_000);

  it("a line whose detalle contains RECHAZAR is rejected with -54 and Hacienda's text for it", async () => {
    const b = validInvoice();
    b.numeroReferencia = 4;
    b.detalleServicio[1].detalle = 'Licencia a RECHAZAR';
    const r = await send(b, 'n4.json');
    expect(r.code, r.stderr).toBe(3);
    expect(r.status.errores).toEqual([{ codigo: -54, mensaje: TEXTOS.impuesto54, fila: null, columna: null, aviso: false }]);
  }, 30_000);

  it('a tiquete of the issuer (kind and emisor) is rejected with the default -54; an aviso rule leaves the document accepted', async () => {
    const te = JSON.parse(readFileSync(new URL('../fixtures/documents/10-te-sin-receptor.json', import.meta.url), 'utf8')) as Record<string, unknown>;
    const r = await send({ ...te, numeroReferencia: 1 }, 'te1.json');
    expect(r.code, r.stderr).toBe(3);
    expect(r.status.errores?.map((e) => e.codigo)).toEqual([-54]);
    const warned = await send({ ...validInvoice(), numeroReferencia: 5 }, 'n5.json');
    expect(warned.code, warned.stderr).toBe(0);
    expect(warned.status.estado).toBe('aceptado');
    expect(warned.status.errores).toEqual([{ codigo: -37, mensaje: TEXTOS.ubicacion37, fila: null, columna: null, aviso: true }]);
  }, 30_000);

  it('a body no rule names is accepted', async () => {
    const r = await send({ ...validInvoice(), numeroReferencia: 6 }, 'n6.json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.status).toMatchObject({ estado: 'aceptado' });
  }, 30_000);

  it('a profile whose fault file went bad: its findings at their paths, exit 1, nothing sent, no stack trace', async () => {
    const good = readFileSync(join(dir, 'faults.json'));
    const before = JSON.parse((await fecr(['documents', 'list', '--json'])).stdout) as unknown[];
    // The profile is unusable as a whole until its file is fixed (read when the backend opens, as its other keys).
    writeFileSync(join(dir, 'faults.json'), '{"errorRate": 1.5, "reject": [{"numeroReferencia": "3"}]}');
    try {
      writeFileSync(join(dir, 'n7.json'), JSON.stringify({ ...validInvoice(), numeroReferencia: 7 }));
      const r = await fecr(['send', 'n7.json', '--wait']);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `error: emulatorFaults: ${join(dir, 'faults.json')}: invalid fault file: 2 findings\n` +
          '  errorRate: must be a number from 0 to 1\n' +
          '  reject[0].numeroReferencia: must be a number\n',
      );
    } finally {
      writeFileSync(join(dir, 'faults.json'), good);
    }
    expect(JSON.parse((await fecr(['documents', 'list', '--json'])).stdout)).toEqual(before);
  }, 30_000);
});

describe('bad fault files are refused with their paths', () => {
  const dir = tempDir('fecr-fault-file-bad-');
  const env = { HOME: dir, FECR_NO_KEYCHAIN: '1' };
  const fecr = (args: string[]) => runCli(args, { env, cwd: dir });
  const BAD = '{"errorRate": 2, "reject": [{"codigo": 54}]}';

  it('fecr config set emulatorFaults=BAD: exit 2, the findings, nothing written', async () => {
    writeFileSync(join(dir, 'bad.json'), BAD);
    const r = await fecr(['config', 'set', 'emulatorFaults=bad.json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `error: emulatorFaults: ${join(dir, 'bad.json')}: invalid fault file: 3 findings; errorRate: must be a number from 0 to 1; ` +
        'reject[0].codigo: must be a negative code such as "-54"; reject[0]: needs at least one of numeroReferencia, emisor, kind, detalleContains, clave\n',
    );
    expect((await fecr(['config', 'set', 'emulatorFaults=missing.json'])).stderr).toBe(`error: emulatorFaults: ${join(dir, 'missing.json')}: cannot read the fault file (no such file)\n`);
    expect((await fecr(['config', 'list'])).stdout).not.toContain('emulatorFaults');
  });

  it('fecr hacienda serve --faults BAD: exit 1, one line per finding; a missing file: one line', async () => {
    writeFileSync(join(dir, 'bad.json'), BAD);
    const r = await fecr(['hacienda', 'serve', '--faults', 'bad.json']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      'error: bad.json: invalid fault file: 3 findings\n' +
        '  errorRate: must be a number from 0 to 1\n' +
        '  reject[0].codigo: must be a negative code such as "-54"\n' +
        '  reject[0]: needs at least one of numeroReferencia, emisor, kind, detalleContains, clave\n',
    );
    const missing = await fecr(['hacienda', 'serve', '--faults', 'nope.json']);
    expect([missing.code, missing.stderr]).toEqual([1, 'error: nope.json: cannot read the fault file (no such file)\n']);
  });
});
