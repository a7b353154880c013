/**
 * The floor of a receptor mail (issue 31): the work that cannot be avoided per mail of an accepted document, in one
 * process without I/O — the PDF rendered from the stored row and the MIME message built (email-render.ts renderMail:
 * pdf.ts renderPdf, email-message.ts composeMail, nodemailer's stream transport). CPU per mail = process user +
 * system over the mails, after a warm-up (warmMailRendering and a few mails), one mail at a time on this thread.
 *
 * The rows are made before the timing and are what the store holds for an accepted document: the signed comprobante
 * (core issueComprobante), a signed MensajeHacienda (core builder, signed as the emulator signs it, with the test
 * issuer's key: the same size and shape), state `aceptado`.
 *
 * As a module: `measureMailFloor(mails, body?)` (body: bench/floor.ts serviceBody, the one-line FE of bench:email and
 * bench:service, by default; batchBody for bench:batch's two-line FE). As a script:
 * `node --import tsx bench/mail-floor.ts [mails=300] [service|batch]` prints `{mailFloorMsPerMail, mails, ...}`.
 */
import { randomBytes } from 'node:crypto';
import { issueComprobante } from '../src/core/comprobante.js';
import { completedInput } from '../src/core/input/complete.js';
import type { IssuerRecord } from '../src/core/input/schema.js';
import type { SigningCredentials } from '../src/core/sign/p12.js';
import { signCanonical } from '../src/core/sign/xades.js';
import { buildMensajeHaciendaXml } from '../src/core/xml/mensaje.js';
import { detalleMensaje } from '../src/emulator/mensaje.js';
import { renderMail, warmMailRendering, type MailToRender } from '../src/service/delivery/email-render.js';
import type { DocumentRow } from '../src/store/schema.js';
import { makeTestIssuer } from '../test/helpers/issuer.js';
import { batchBody, serviceBody } from './floor.js';

export interface MailFloorResult {
  mails: number;
  /** CPU (user + system) per mail, ms. */
  mailFloorMsPerMail: number;
  wallMsPerMail: number;
  /** Mean size of one message (MIME bytes). */
  bytesPerMail: number;
}

let testIssuer: ReturnType<typeof makeTestIssuer> | undefined;

/** The stored row of an accepted document made from `body(n)`, as the mail job reads it. */
export function acceptedRow(body: Record<string, unknown>, n: number): DocumentRow {
  const { issuer: rec, creds } = (testIssuer ??= makeTestIssuer());
  const issuer = rec as IssuerRecord;
  const now = Date.now();
  const issued = issueComprobante(completedInput(body), issuer, creds as SigningCredentials, {
    signingTime: new Date(now),
    securityCode: String(10_000_000 + (n % 90_000_000)),
    newId: () => randomBytes(8).toString('hex'),
  });
  if (!issued.ok) throw new Error(`body ${n}: ${JSON.stringify(issued.findings)}`);
  const d = issued.doc;
  const total = issued.totals.resumen.totalComprobante.toFixed(5);
  const mensaje = buildMensajeHaciendaXml({
    clave: d.clave,
    nombreEmisor: issuer.nombre ?? '',
    tipoIdentificacionEmisor: issuer.tipoIdentificacion,
    numeroCedulaEmisor: issuer.identificacion,
    ...(d.receptor?.identificacion
      ? { nombreReceptor: d.receptor.nombre ?? '', tipoIdentificacionReceptor: d.receptor.identificacion.tipo, numeroCedulaReceptor: d.receptor.identificacion.numero }
      : {}),
    mensaje: 1,
    detalleMensaje: detalleMensaje({ environment: 'sandbox', accepted: true, errors: [] }),
    montoTotalImpuesto: issued.totals.resumen.totalImpuesto.toFixed(5),
    totalFactura: total,
  });
  const responseXml = signCanonical(mensaje, creds as SigningCredentials, { signingTime: new Date(now), newId: () => randomBytes(12).toString('hex') });
  return {
    id: n,
    account_id: 1,
    issuer_id: 1,
    clave: d.clave,
    kind: d.kind,
    sucursal: 1,
    terminal: 1,
    numero_referencia: n,
    body_hash: '',
    state: 'aceptado',
    xml: issued.xml,
    response_xml: responseXml,
    mensaje: 1,
    detalle_mensaje: null,
    fecha_emision: d.fechaEmision,
    total_comprobante: total,
    moneda: d.moneda.codigoMoneda,
    receptor_nombre: d.receptor?.nombre ?? null,
    emisor_tipo: issuer.tipoIdentificacion,
    emisor_numero: issuer.identificacion,
    receptor_tipo: d.receptor?.identificacion?.tipo ?? null,
    receptor_numero: d.receptor?.identificacion?.numero ?? null,
    correos: JSON.stringify(['compras@elcafetal.example.cr']),
    submission_key: null,
    created_at: now,
    updated_at: now,
    decided_at: now,
  } as DocumentRow;
}

/** The mail the `email` job hands the renderer for `row` (email-job.ts attempt). */
export function mailOf(row: DocumentRow): MailToRender {
  return {
    row,
    issuerName: 'SOFTWARE TICO SOCIEDAD ANONIMA',
    from: { name: 'SOFTWARE TICO SOCIEDAD ANONIMA', address: 'facturas@fecr.test' },
    to: ['compras@elcafetal.example.cr'],
    messageId: `<${row.clave}.${row.id}@fecr.email>`,
    date: new Date(),
    outboxName: `${row.clave}-${row.id}`,
  };
}

/** Renders `mails` mails (after a warm-up of `warmUp`), one at a time on this thread, and returns CPU and wall per mail. */
export async function measureMailFloor(mails: number, body: (n: number) => Record<string, unknown> = serviceBody, warmUp = 30): Promise<MailFloorResult> {
  const rows = Array.from({ length: mails + warmUp }, (_, i) => acceptedRow(body(i + 1), i + 1));
  await warmMailRendering();
  for (const r of rows.slice(0, warmUp)) await renderMail(mailOf(r));
  const timed = rows.slice(warmUp).map(mailOf);
  let bytes = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (const m of timed) bytes += (await renderMail(m)).raw.length;
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const r2 = (x: number) => Math.round(x * 100) / 100;
  return { mails, mailFloorMsPerMail: r2((cpu.user + cpu.system) / 1000 / mails), wallMsPerMail: r2(wall / mails), bytesPerMail: Math.round(bytes / mails) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const mails = Number(process.argv[2] ?? 300);
  console.log(JSON.stringify(await measureMailFloor(mails, process.argv[3] === 'batch' ? batchBody : serviceBody)));
}
