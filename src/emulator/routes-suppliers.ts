/**
 * `POST /_emulator/suppliers/issue` and `GET /_emulator/suppliers` (admin, no authentication, like the other
 * /_emulator/ routes): test suppliers issue signed comprobantes to a receptor (suppliers.ts). The document is
 * received by the emulator as if its issuer had POSTed it (username `proveedor-<id>`), validated like any other,
 * and answered with a MensajeHacienda; the answer of this route carries the signed XML in base64.
 *
 * Body: `{receptor: {tipo, numero, nombre?}, tipo?: "FE"|"ND"|"NC"|"FEC" (default FE), proveedor?: "<id>",
 *         lineas?: [{detalle, cabys, cantidad, precioUnitario, codigoTarifaIVA, unidadMedida?}],
 *         referencia?: "<clave>" (NC/ND), ambiente?: "production"|"sandbox" (default production, as env local),
 *         cantidad?: 1..1000 (documents to issue, default 1),
 *         esperarMs?: 0..600000 (answer once the emulator has decided every document issued, or after this long)}`
 * Answer: `{documentos: [{clave, tipo, proveedor: {identificacion, nombre}, estado, xml: <base64>}]}` (one per cantidad;
 * estado: the reception's state when the answer was written: aceptado/rechazado once decided, else recibido/procesando).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { parseClave } from '../core/clave.js';
import type { ReceptionProcessor } from './processor.js';
import type { EmulatorEnvironment, EmulatorStore, ReceptionRecord } from './store.js';
import { SUPPLIER_KINDS, TEST_SUPPLIERS, type SupplierBook, type SupplierRequest } from './suppliers.js';

const Line = z.object({
  detalle: z.string().min(3).max(200),
  cabys: z.string().regex(/^\d{13}$/),
  cantidad: z.string().regex(/^\d+(\.\d{1,3})?$/),
  precioUnitario: z.string().regex(/^\d+(\.\d{1,5})?$/),
  codigoTarifaIVA: z.enum(['01', '02', '03', '04', '08', '09', '10', '11']),
  unidadMedida: z.string().min(1).max(15).optional(),
});

const IssueBody = z.object({
  receptor: z.object({
    tipo: z.enum(['01', '02', '03', '04']),
    numero: z.string().regex(/^[A-Za-z0-9]{9,12}$/),
    nombre: z.string().min(3).max(100).optional(),
  }),
  tipo: z.enum(SUPPLIER_KINDS).default('FE'),
  proveedor: z.string().regex(/^\d{9,12}$/).optional(),
  lineas: z.array(Line).min(1).max(50).optional(),
  referencia: z.string().optional(),
  /** Another currency than colones, at the given TipoCambio (issue 29: purchases converted in the IVA report). */
  moneda: z.object({ codigoMoneda: z.enum(['USD', 'EUR']), tipoCambio: z.string().regex(/^\d{1,13}(\.\d{1,5})?$/) }).optional(),
  ambiente: z.enum(['production', 'sandbox']).default('production'),
  cantidad: z.number().int().min(1).max(1000).default(1),
  esperarMs: z.number().int().min(0).max(600_000).default(0),
});

const UNDECIDED = new Set(['recibido', 'procesando']);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface SupplierRouteDeps {
  store: EmulatorStore;
  processor: ReceptionProcessor;
  book: SupplierBook;
  now: () => number;
}

function bad(reply: FastifyReply, error: string, issues: string[] = []): FastifyReply {
  return reply.code(400).send({ error, issues });
}

export function registerSupplierRoutes(app: FastifyInstance, deps: SupplierRouteDeps): void {
  app.get('/_emulator/suppliers', async () => ({
    proveedores: TEST_SUPPLIERS.map((s) => ({ identificacion: s.identificacion, tipoIdentificacion: s.tipoIdentificacion, nombre: s.nombre, codigoActividad: s.codigoActividad })),
  }));

  app.post('/_emulator/suppliers/issue', async (req, reply) => {
    const parsed = IssueBody.safeParse(req.body ?? {});
    if (!parsed.success) return bad(reply, 'invalid body', parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
    const b = parsed.data;
    const env: EmulatorEnvironment = b.ambiente;
    let referencia: SupplierRequest['referencia'];
    if (b.tipo === 'NC' || b.tipo === 'ND') {
      const ref = b.referencia ? deps.store.getReception(env, b.referencia) : undefined;
      if (!ref) return bad(reply, `${b.tipo} needs referencia: the clave of a document this emulator received`, ['referencia: unknown clave']);
      referencia = { clave: ref.clave, fechaEmision: ref.fecha };
    }
    const documentos = [];
    for (let i = 0; i < b.cantidad; i++) {
      const supplier = deps.book.pick(b.receptor.numero, b.proveedor ?? (referencia ? parseClave(referencia.clave)?.identificacion.replace(/^0+/, '') : undefined));
      if (!supplier) return bad(reply, `no test supplier ${b.proveedor ?? ''}`.trim(), [`proveedor: one of ${TEST_SUPPLIERS.map((s) => s.identificacion).join(', ')}`]);
      const request: SupplierRequest = {
        receptor: b.receptor,
        kind: b.tipo,
        ...(b.lineas ? { lineas: b.lineas } : {}),
        ...(referencia ? { referencia } : {}),
        ...(b.moneda ? { moneda: b.moneda } : {}),
      };
      const issued = deps.book.issue(request, supplier);
      receive(deps, env, issued.doc, Buffer.from(issued.xml, 'utf8'), supplier.identificacion, b.tipo === 'FEC');
      documentos.push({
        clave: issued.doc.clave,
        tipo: b.tipo,
        proveedor: { identificacion: supplier.identificacion, nombre: supplier.nombre },
        estado: 'recibido',
        xml: Buffer.from(issued.xml, 'utf8').toString('base64'),
      });
    }
    // Asked to wait: until the processor has decided each document (the buyer can then answer it), or the deadline.
    // Wall-clock time (deps.now may be a test's frozen clock).
    const deadline = Date.now() + b.esperarMs;
    for (;;) {
      for (const d of documentos) d.estado = deps.store.getReception(env, d.clave)?.estado ?? d.estado;
      if (!documentos.some((d) => UNDECIDED.has(d.estado)) || Date.now() >= deadline) break;
      await sleep(Math.min(25, Math.max(1, deadline - Date.now())));
    }
    return reply.code(201).send({ documentos });
  });
}

/** The supplier's document as if its issuer had POSTed it: a reception, validated and answered like any other. */
function receive(deps: SupplierRouteDeps, env: EmulatorEnvironment, doc: { clave: string; fechaEmision: string; emisor: { identificacion: { tipo: string; numero: string } }; receptor?: { identificacion: { tipo: string; numero: string } } }, xml: Buffer, supplierId: string, fec: boolean): void {
  const now = deps.now();
  // A FEC is issued (and sent) by its Receptor, the buyer: it is the POST's emisor.
  const [issuer, other] = fec ? [doc.receptor!, doc.emisor] : [doc.emisor, doc.receptor];
  const rec: ReceptionRecord = {
    environment: env,
    key: doc.clave,
    clave: doc.clave,
    fecha: doc.fechaEmision,
    emisor: { tipoIdentificacion: issuer.identificacion.tipo, numeroIdentificacion: issuer.identificacion.numero },
    ...(other ? { receptor: { tipoIdentificacion: other.identificacion.tipo, numeroIdentificacion: other.identificacion.numero } } : {}),
    username: `proveedor-${supplierId}`,
    xml,
    estado: 'recibido',
    receivedAt: now,
    updatedAt: now,
    acceptedPosts: 1,
    duplicatePosts: 0,
  };
  if (!deps.store.insertReception(rec)) return;
  deps.processor.schedule(rec);
}
