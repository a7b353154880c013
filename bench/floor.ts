/**
 * The floor of a document (issue 31): the work that cannot be avoided per document, in one process without I/O —
 * the JSON body through the schema, totals, v4.4 XML and XAdES-EPES signature (core issueComprobante), then the
 * emulator's own analysis of it (analyzeDocument: well-formedness, signature, signer, clave, totals, kind rules) and
 * its XSD (one xmllint run per 100 documents, as the emulator batches them). CPU per document = (process user +
 * system, plus the xmllint children's, from /proc: bench/proc-cpu.ts) over the documents, after a warm-up.
 *
 * As a module: `measureFloor(bodies)`; as a script (what bench:batch and bench:service run, in the same minutes as
 * their own figures): `node --import tsx bench/floor.ts [documents=1000] [batch|service]` prints
 * `{floorMsPerDocument, documents, wallMsPerDocument}`. `batch`: the two-line FE of bench/batch.ts; `service`: the
 * one-line FE bench/service.ts posts (test/helpers/bodies.ts validInvoice).
 */
import { pidTreeCpuMs } from './proc-cpu.js';
import { createXsdValidator } from '../src/adapters/xsd/index.js';
import { randomBytes } from 'node:crypto';
import { issueComprobante } from '../src/core/comprobante.js';
import { completedInput } from '../src/core/input/complete.js';
import type { IssuerRecord } from '../src/core/input/schema.js';
import type { SigningCredentials } from '../src/core/sign/p12.js';
import { analyzeDocument } from '../src/emulator/validate.js';
import { makeTestIssuer } from '../test/helpers/issuer.js';
import { validInvoice } from '../test/helpers/bodies.js';

/** CPU of this process and of its children (reaped and alive), in ms: bench/proc-cpu.ts for this process. */
export function processTreeCpuMs(): number {
  return pidTreeCpuMs(process.pid);
}

/** The body of bench/batch.ts's CSV document `n` (two lines, 13 %), as JSON. */
export function batchBody(n: number): Record<string, unknown> {
  return {
    emisor: '3101123456',
    numeroReferencia: n,
    tipoDoc: '1',
    fechaEmision: '2026-03-02T09:15:00-06:00',
    codigoActividad: '6201.0',
    receptor: { nombre: 'DISTRIBUIDORA EL CAFETAL LIMITADA', identificacion: { tipo: '02', numero: '3101987654' }, correoElectronico: 'compras@elcafetal.example.cr' },
    condicionVenta: '01',
    folioType: 'INVOICE',
    detalleServicio: [
      { codigo: '8311200000000', detalle: 'Consultoría en gestión comercial', cantidad: 1 + (n % 5), unidadMedida: 'h', precioUnitario: '50000', ...(n % 3 === 0 ? { descuento: '1000.00', codigoDescuento: '07' } : {}), impuesto: [{ codigo: '01', codigoTarifa: '08', tarifa: '13' }] },
      { codigo: '4781400000000', detalle: 'Licencia de software', cantidad: 1 + (n % 7), unidadMedida: 'Unid', precioUnitario: '1250.50', impuesto: [{ codigo: '01', codigoTarifa: '08', tarifa: '13' }] },
    ],
    resumenFactura: { codigoTipoMoneda: { codigoMoneda: 'CRC', tipoCambio: '1' }, mediosPago: [{ tipoMedioPago: '04' }] },
  };
}

export interface FloorResult {
  documents: number;
  floorMsPerDocument: number;
  wallMsPerDocument: number;
  accepted: number;
}

/** Runs the floor's work on `count` bodies made by `body(n)` (after `warmUp` of them), one document at a time. */
export async function measureFloor(body: (n: number) => Record<string, unknown>, count: number, warmUp = 50): Promise<FloorResult> {
  const { issuer: rec, creds } = makeTestIssuer();
  const issuer = rec as IssuerRecord;
  const xsd = createXsdValidator({ persistentShell: false });
  const run = async (from: number, n: number) => {
    let accepted = 0;
    let pending: { xml: string; ok: boolean; why?: unknown }[] = [];
    const flush = async () => {
      if (pending.length === 0) return;
      const results = await xsd.validate(
        pending.map((p) => p.xml),
        'FE',
      );
      // FLOOR_DEBUG=1: why a document was not accepted (its XSD error or the analysis's items).
      results.forEach((r, i) => (r.valid && pending[i]!.ok ? accepted++ : process.env.FLOOR_DEBUG ? console.error(JSON.stringify(r.errors?.[0] ?? pending[i]!.why)) : undefined));
      pending = [];
    };
    for (let i = from; i < from + n; i++) {
      // The body as the CLI hands it over: figures completed (core/input/complete.ts), as `fecr batch` does.
      const issued = issueComprobante(completedInput(body(i)), issuer, creds as SigningCredentials, {
        signingTime: new Date(),
        securityCode: String(10_000_000 + (i % 90_000_000)),
        newId: () => randomBytes(8).toString('hex'),
      });
      if (!issued.ok) throw new Error(`body ${i}: ${JSON.stringify(issued.findings)}`);
      const bytes = Buffer.from(issued.xml, 'utf8');
      const a = analyzeDocument(bytes, {
        clave: issued.doc.clave,
        fecha: issued.doc.fechaEmision,
        emisor: { tipoIdentificacion: issuer.tipoIdentificacion, numeroIdentificacion: issuer.identificacion },
        ...(issued.doc.receptor?.identificacion ? { receptor: { tipoIdentificacion: issued.doc.receptor.identificacion.tipo, numeroIdentificacion: issued.doc.receptor.identificacion.numero } } : {}),
        environment: 'sandbox',
        username: 'cpj-3-101-123456@stag.comprobanteselectronicos.go.cr',
        now: new Date(),
      });
      pending.push({ xml: issued.xml, ok: a.result.errors.every((e) => e.aviso), why: a.result.errors });
      if (pending.length >= 100) await flush();
    }
    await flush();
    return accepted;
  };
  await run(1_000_000, warmUp);
  const cpu0 = processTreeCpuMs();
  const t0 = performance.now();
  const accepted = await run(1, count);
  const wall = performance.now() - t0;
  const cpu = processTreeCpuMs() - cpu0;
  await xsd.close?.();
  return { documents: count, floorMsPerDocument: Math.round((cpu / count) * 100) / 100, wallMsPerDocument: Math.round((wall / count) * 100) / 100, accepted };
}

/** The one-line FE bench/service.ts posts. */
export function serviceBody(n: number): Record<string, unknown> {
  return { ...validInvoice(), numeroReferencia: n };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const count = Number(process.argv[2] ?? 1000);
  const which = process.argv[3] === 'service' ? serviceBody : batchBody;
  console.log(JSON.stringify(await measureFloor(which, count)));
}
