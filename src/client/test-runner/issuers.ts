/**
 * The test issuers of `fecr test`: each identificación the bodies name as `emisor` that the profile does not have yet
 * is registered with a generated test .p12 (core/sign/testcert.ts, fecr's test root, trusted by the embedded
 * emulator only, as `fecr demo` does), its codigoActividad the one of the first body that names it. The emulator's
 * registry takes any issuer: one it does not know has no activities or location to compare (no -407, -37), one it
 * knows (fixtures/hacienda-registry.json, e.g. 3101123456 with 6201.0) is judged against its registration.
 */
import type { Backend } from '../backend.js';
import type { TestCase } from './collect.js';

export const TEST_ISSUER_PIN = '1234';

export interface IssuerNeed {
  identificacion: string;
  codigoActividad: string;
}

/** The issuers the cases name (a body's `emisor`), each with the codigoActividad of the first body naming it. */
export function issuersOf(cases: readonly TestCase[]): IssuerNeed[] {
  const out = new Map<string, IssuerNeed>();
  for (const c of cases) {
    const b = c.body as { emisor?: unknown; codigoActividad?: unknown } | undefined;
    const id = typeof b?.emisor === 'string' || typeof b?.emisor === 'number' ? String(b.emisor).trim() : '';
    if (!/^\d{9,12}$/.test(id) || out.has(id)) continue;
    const act = typeof b?.codigoActividad === 'string' || typeof b?.codigoActividad === 'number' ? String(b.codigoActividad) : '';
    out.set(id, { identificacion: id, codigoActividad: act || '6201.0' });
  }
  return [...out.values()];
}

/** The tipo de identificación of a number by its digits: 9 → 01 (física), 10 → 02 (jurídica), 11–12 → 03 (DIMEX). */
export function tipoOf(id: string): '01' | '02' | '03' {
  return id.length === 9 ? '01' : id.length === 10 ? '02' : '03';
}

/** Registers the issuers the profile lacks; returns the identificaciones registered. `register` false: lists them only. */
export async function ensureTestIssuers(b: Backend, needs: readonly IssuerNeed[], now: Date, register = true): Promise<{ registered: string[]; missing: string[] }> {
  const registered: string[] = [];
  const missing: string[] = [];
  for (const n of needs) {
    if (await b.getIssuer(n.identificacion)) continue;
    if (!register) {
      missing.push(n.identificacion);
      continue;
    }
    await b.registerIssuer(await testIssuerRecord(n, now));
    registered.push(n.identificacion);
  }
  return { registered, missing };
}

/** The record of a test issuer: a generated .p12 for its identificación, placeholder contact and location data. */
export async function testIssuerRecord(n: IssuerNeed, now: Date): Promise<Record<string, unknown>> {
  const { createTestP12 } = await import('../../core/sign/testcert.js');
  const tipo = tipoOf(n.identificacion);
  const nombre = `EMISOR DE PRUEBA ${n.identificacion}`;
  const p12 = createTestP12({ id: n.identificacion, type: tipo, pin: TEST_ISSUER_PIN, name: nombre, now });
  return {
    identificacion: n.identificacion,
    tipoIdentificacion: tipo,
    codigoActividad: n.codigoActividad,
    sucursal: 1,
    nombre,
    nombreComercial: 'Pruebas fecr',
    telefono: '+506 2222-3333',
    correoElectronico: `emisor-${n.identificacion}@pruebas.example.cr`,
    ubicacion: { provincia: '1', canton: '01', distrito: '08', direccion: 'Avenida 7, calles 31 y 33' },
    ambiente: 2,
    usuarioHacienda: `cpj-${n.identificacion}@stag.comprobanteselectronicos.go.cr`,
    claveHacienda: Buffer.from('fecr-test').toString('base64'),
    pinCertificado: TEST_ISSUER_PIN,
    certificadoHacienda: p12.toString('base64'),
  };
}
