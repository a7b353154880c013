/** What the `fecr recibidos` verbs share: flags, the backend's buyer side, the decision verb, output. */
import type { Ctx } from '../../cli/context.js';
import { EXIT, SilentExit, UsageError, UserError } from '../../cli/errors.js';
import { findingText } from '../../cli/findings.js';
import { writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import { safeBlock, safeText } from '../../cli/safe-text.js';
import { renderTable, type TableOptions } from '../../cli/table.js';
import { BackendError, type Backend } from '../../client/backend.js';
import type { DecideOptions, RecibidoDetail, RecibidosApi, RecibidoSummary, SituacionIva } from '../../client/recibidos.js';
import type { Finding } from '../../core/model.js';
import { parseDetalleMensaje } from '../../core/xml/detalle-mensaje.js';
import { withBackend } from '../backend.js';
import { checkClave, timeoutMs } from '../documents/shared.js';

export interface ImportFlags {
  json?: boolean;
}
export interface ListFlags {
  state?: string;
  since?: string;
  issuer?: string;
  /** The first names of --state, --since and --issuer, kept as hidden aliases. */
  estado?: string;
  desde?: string;
  emisor?: string;
  /** Only those not answered yet, oldest first, with their age (due.ts). */
  due?: boolean;
  json?: boolean;
  csv?: boolean;
}
export interface ShowFlags {
  json?: boolean;
  csv?: boolean;
}
export interface SummaryFlags {
  /** Only this issuer's purchases (the buyer); without it one section per issuer (issue 36). */
  issuer?: string;
  json?: boolean;
  csv?: boolean;
}
export interface DecideFlags {
  detalle?: string;
  condicionImpuesto?: string;
  ivaAcreditable?: string;
  gastoAplicable?: string;
  timeout?: string;
  force?: boolean;
  json?: boolean;
}

/** The backend's buyer side (a backend without one: an error, not a crash). */
export function buyer(b: Backend): RecibidosApi {
  if (!b.recibidos) throw new UserError('this backend has no buyer side (fecr recibidos)');
  return b.recibidos();
}

/** `bulk`: many documents (a folder): in local mode the embedded emulator then runs on a thread of its own. */
export function withBuyer<T>(ctx: Ctx, fn: (r: RecibidosApi) => Promise<T>, opts: { bulk?: boolean } = {}): Promise<T> {
  return withBackend(ctx, (b) => fn(buyer(b)), opts.bulk ? { bulk: true } : {});
}

/** Findings one per line on stderr, through the sanitiser (they quote the supplier's XML and file names). */
export function findingLines(ctx: Ctx, findings: Finding[], indent = '  ', prefix = ''): void {
  for (const f of findings) writeLine(ctx.io.stderr, `${indent}${prefix}${findingText(f)}`);
}

const LIST_HEADER = ['clave', 'estado', 'tipo', 'emisor', 'fechaEmision', 'totalComprobante', 'totalImpuesto', 'hacienda', 'respuesta'];

/** The list as a table (its cells through the sanitiser: they are the suppliers' words). */
export function printList(ctx: Ctx, rows: RecibidoSummary[], opts: TableOptions = {}): void {
  const cells = rows.map((r) => [
    r.clave ?? '(no clave)',
    r.estado,
    r.tipo ?? '',
    `${r.emisor.numero ?? ''} ${r.emisor.nombre ?? ''}`.trim(),
    r.fechaEmision ?? '',
    r.totalComprobante ?? '',
    r.totalImpuesto ?? '',
    r.haciendaEstado ?? '',
    r.respuestaEstado ?? '',
  ]);
  writeLine(ctx.io.stdout, renderTable(ctx, LIST_HEADER, cells, opts));
}

/**
 * One received comprobante as field/value rows, through the house's table (cli/table.ts): aligned on a terminal,
 * tab-separated when piped, CSV with --csv; every cell through the sanitiser (it is the supplier's XML).
 */
export function printDetail(ctx: Ctx, d: RecibidoDetail, opts: TableOptions = {}): void {
  writeLine(ctx.io.stdout, renderTable(ctx, ['field', 'value'], detailRows(d), opts));
}

function detailRows(d: RecibidoDetail): string[][] {
  const rows: string[][] = [];
  const line = (k: string, v: string | null | undefined) => rows.push([k, v ?? '']);
  line('clave', d.clave);
  line('estado', d.estado);
  line('tipo', `${d.tipo ?? ''} v${d.version ?? '?'}`);
  line('emisor', `${d.emisor.numero ?? ''} ${d.emisor.nombre ?? ''}`);
  line('receptor', d.receptor.numero);
  line('fechaEmision', d.fechaEmision);
  line('totalComprobante', `${d.totalComprobante ?? ''} ${d.moneda ?? ''}`);
  line('totalImpuesto', d.totalImpuesto);
  line('hacienda', d.haciendaEstado);
  line('IVA', SITUACION_TEXT[d.situacionIva] ?? d.situacionIva);
  for (const i of d.iva) line(`IVA tarifa ${i.codigoTarifaIVA}`, `${i.tarifa}% base ${i.base} impuesto ${i.impuesto}`);
  if (d.decision) {
    line('answer', `Mensaje ${d.decision.mensaje} (${d.estado}), ${d.decision.mensajeClave ?? ''}`);
    line('answer at Hacienda', d.respuestaEstado);
    line('ivaAcreditable', d.decision.montoTotalImpuestoAcreditar);
    line('gastoAplicable', d.decision.montoTotalDeGastoAplicable);
    if (d.decision.detalle) line('detalle', d.decision.detalle);
    if (d.respuestaEstado === 'rechazado' || d.respuestaEstado === 'error') line("Hacienda's answer", firstLine(d.decision.respuestaDetalle));
  }
  // The answers replaced after Hacienda did not take them (issue 26), oldest first.
  for (const [i, a] of (d.respuestasAnteriores ?? []).entries()) {
    line(`earlier answer ${i + 1}`, `Mensaje ${a.mensaje} (${a.estado}), ${a.mensajeClave ?? ''}, Hacienda: ${a.respuestaEstado ?? 'pendiente'}${a.respuestaDetalle ? ` (${firstLine(a.respuestaDetalle)})` : ''}, replaced ${a.reemplazadaEn}`);
  }
  for (const f of d.hallazgos) line('finding', findingText(f));
  // What Hacienda said at import is not repeated once it has accepted the document (asked again when answering).
  for (const f of d.avisos) if (!(f.path === 'hacienda' && d.haciendaEstado === 'aceptado')) line('warning', findingText(f));
  return rows;
}

/** Hacienda's DetalleMensaje on one line, cut at 240 characters (all of it: `show --json` and the files). */
function firstLine(text: string | null): string {
  // Hacienda's reasons first (core/xml/detalle-mensaje.ts), not the opening every sandbox answer starts with.
  const items = parseDetalleMensaje(text ?? '');
  const first = items.find((i) => !i.aviso) ?? items[0];
  const one = first
    ? `${first.codigo ?? ''} ${first.mensaje}`.trim() + (items.length > 1 ? ` (+${items.length - 1} more)` : '')
    : (text ?? '').split(/\r?\n/).map((l) => l.trim()).filter((l) => l.length > 1).join(' ');
  return one.length > 240 ? `${one.slice(0, 239)}…` : one;
}

/** Why a received document's IVA is or is not in the month's figures (queries.ts situacionIva), in words. */
export const SITUACION_TEXT: Readonly<Record<SituacionIva, string>> = {
  acreditable: 'counted (accepted, and Hacienda accepted the MensajeReceptor)',
  sin_respuesta: 'not counted: not answered yet',
  respuesta_pendiente: 'not counted: Hacienda has not decided on the MensajeReceptor yet',
  respuesta_rechazada: 'not counted: Hacienda rejected the MensajeReceptor (answer it again)',
  respuesta_fallida: 'not counted: the MensajeReceptor ended in error, Hacienda did not take it (answer it again)',
  rechazado_por_comprador: 'not counted: rejected by the buyer',
  invalido: 'not counted: refused at import',
};

/** aceptar | parcial | rechazar: queue the MensajeReceptor, wait for Hacienda's verdict (or not), print, exit. */
export async function decide(ctx: Ctx, decision: DecideOptions['decision'], claveArg: string, f: DecideFlags): Promise<void> {
  const clave = checkClave(claveArg);
  const wait = f.timeout === '0' ? 0 : timeoutMs(f.timeout);
  if (f.condicionImpuesto !== undefined && !/^0[1-5]$/.test(f.condicionImpuesto)) throw new UsageError('--condicion-impuesto must be 01, 02, 03, 04 or 05');
  for (const [flag, v] of [['--iva-acreditable', f.ivaAcreditable], ['--gasto-aplicable', f.gastoAplicable]] as const) {
    if (v !== undefined && !/^\d+(\.\d{1,5})?$/.test(v)) throw new UsageError(`${flag} must be an amount like 1234.5 (got "${v}")`);
  }
  const opts: DecideOptions = {
    decision,
    ...(f.detalle !== undefined ? { detalle: f.detalle } : {}),
    ...(f.condicionImpuesto !== undefined ? { condicionImpuesto: f.condicionImpuesto } : {}),
    ...(f.ivaAcreditable !== undefined ? { ivaAcreditable: f.ivaAcreditable } : {}),
    ...(f.gastoAplicable !== undefined ? { gastoAplicable: f.gastoAplicable } : {}),
    ...(f.force ? { forzar: true } : {}),
  };
  const { result, detail } = await withBuyer(ctx, async (r) => {
    try {
      return await r.decide(clave, opts, { waitMs: wait });
    } catch (e) {
      // Hacienda has no record of the comprobante (asked again now): one line that says why and the way on.
      const why = e instanceof BackendError ? e.findings.find((x) => x.path === 'hacienda') : undefined;
      if (why) throw new UserError(safeText(`${clave}: ${why.message}; answer it once Hacienda has it, or now with --force`));
      throw e;
    }
  });
  const respuesta = detail?.respuestaEstado ?? 'pendiente';
  if (f.json) printJson(ctx, { ...result, respuestaEstado: respuesta, respuestaDetalle: detail?.decision?.respuestaDetalle ?? null });
  else {
    // What a (remote) backend answered: through the sanitiser like any outside text.
    writeLine(ctx.io.stdout, safeText(`${clave} ${result.estado}: MensajeReceptor ${result.consecutivoReceptor} (Mensaje ${result.mensaje}), Hacienda: ${respuesta}`));
    if (result.montoTotalImpuestoAcreditar !== null) writeLine(ctx.io.stdout, safeText(`ivaAcreditable ${result.montoTotalImpuestoAcreditar}  gastoAplicable ${result.montoTotalDeGastoAplicable}`));
  }
  if (respuesta === 'rechazado' || respuesta === 'error') {
    if (!f.json && detail?.decision?.respuestaDetalle) writeLine(ctx.io.stderr, safeBlock(detail.decision.respuestaDetalle.trim()));
    if (!f.json) writeLine(ctx.io.stderr, `Hacienda did not take this MensajeReceptor: the document's IVA is not counted; answer it again (fecr recibidos aceptar|parcial|rechazar ${clave}) once the cause is fixed`);
    throw new SilentExit(respuesta === 'rechazado' ? EXIT.rejected : EXIT.error);
  }
  if (wait > 0 && respuesta !== 'aceptado') throw new SilentExit(EXIT.pending);
}

export interface DemoPurchase {
  clave: string;
  proveedor: string;
  decision: string;
  respuesta: string;
  ivaAcreditable: string | null;
  gastoAplicable: string | null;
}

/**
 * `fecr demo`'s buyer side (local profile, embedded emulator): three supplier invoices to the demo issuer, imported,
 * then accepted, partially accepted and rejected, each MensajeReceptor followed to Hacienda's verdict, and the month's
 * summary. Undefined when the backend cannot play suppliers (a remote profile).
 */
/**
 * The demo's supplier invoices were just issued to the emulator, which decides them a moment later; until it has, an
 * answer is refused (issue 26: a MensajeReceptor about a comprobante Hacienda has not accepted would be rejected).
 * The demo waits for that, up to its deadline, instead of forcing the answer; any other refusal is thrown at once.
 */
async function decideOnceHaciendaKnows(r: RecibidosApi, clave: string, plan: DecideOptions, deadline: number): ReturnType<RecibidosApi['decide']> {
  for (;;) {
    try {
      return await r.decide(clave, plan, { waitMs: Math.max(1_000, deadline - Date.now()) });
    } catch (e) {
      const haciendaNotYet = e instanceof BackendError && e.findings.some((f) => f.path === 'hacienda');
      if (!haciendaNotYet || Date.now() > deadline - 500) throw e;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

export async function demoPurchases(
  b: Backend,
  receptor: { tipo: string; numero: string; nombre?: string },
  deadline: number,
): Promise<{ purchases: DemoPurchase[]; resumen: import('../../client/recibidos.js').IssuerMonthlySummary } | undefined> {
  const r = b.recibidos?.();
  if (!r?.supplierInvoices) return undefined;
  const files = await r.supplierInvoices({ receptor, count: 3 });
  const imported = await r.import(files.map((f) => ({ name: `${f.clave}.xml`, bytes: f.bytes })));
  const plan: DecideOptions[] = [
    { decision: 'aceptar' },
    { decision: 'parcial', ivaAcreditable: '1000', detalle: 'Aceptación parcial: parte del servicio no fue prestado' },
    { decision: 'rechazar', detalle: 'Mercadería no recibida' },
  ];
  const purchases: DemoPurchase[] = [];
  for (const [i, x] of imported.entries()) {
    if (!x.clave || x.estado !== 'pendiente') continue;
    const { result, detail } = await decideOnceHaciendaKnows(r, x.clave, plan[i % 3]!, deadline);
    purchases.push({
      clave: x.clave,
      proveedor: x.emisor ?? '',
      decision: result.estado,
      respuesta: detail?.respuestaEstado ?? 'pendiente',
      ivaAcreditable: result.montoTotalImpuestoAcreditar,
      gastoAplicable: result.montoTotalDeGastoAplicable,
    });
  }
  const mes = (await r.show(imported[0]!.clave!))?.fechaEmision?.slice(0, 7) ?? '';
  return { purchases, resumen: await r.summary(mes, receptor.numero) };
}
