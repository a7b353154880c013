/**
 * What the PDF says, apart from where it says it (pdf.ts lays the page out): the title of each kind, the state's
 * label, money and numbers as printed (src/core/money-format.ts: `₡1 234 567,89`), dates, identifications, the parties with their
 * location, the lines of an exoneración. Read from the signed XML (parsed) and its raw element tree.
 */
import {
  CODIGOS_IMPUESTO,
  CONDICIONES_VENTA,
  INSTITUCIONES_EXONERACION,
  MEDIOS_PAGO,
  TIPOS_DOC_REFERENCIA,
  TIPOS_EXONERACION,
  TARIFAS_IVA,
  TIPOS_IDENTIFICACION,
} from '../core/codes.js';
import { dec } from '../core/money.js';
import { currencySymbol, formatAmount, formatNumber, formatRate, groupThousands } from '../core/money-format.js';
import { ubicacionNames } from '../core/catalog/ubicacion.js';
import type { DocumentKind } from '../core/model.js';
import { parseComprobanteXml, type ParsedComprobante, type ParsedExoneracion, type ParsedImpuesto } from '../core/xml/parse-comprobante.js';
import { parseXmlRoot } from '../core/xml/raw-document.js';
import type { DocumentRow } from '../store/schema.js';
import { codeTable } from '../core/code-table.js';
import { errorLine, parseDetalleMensaje } from '../core/xml/detalle-mensaje.js';

export const PDF_TITLES: Record<DocumentKind, string> = {
  FE: 'Factura Electrónica',
  NC: 'Nota de Crédito Electrónica',
  ND: 'Nota de Débito Electrónica',
  TE: 'Tiquete Electrónico',
  FEC: 'Factura Electrónica de Compra',
  FEE: 'Factura Electrónica de Exportación',
  REP: 'Recibo Electrónico de Pago',
};

/** The titles of the two party blocks: who issues, who receives, as a reader of each kind expects them. */
export const PARTY_TITLES: Record<DocumentKind, [string, string]> = {
  FE: ['Emisor', 'Receptor'],
  NC: ['Emisor', 'Receptor'],
  ND: ['Emisor', 'Receptor'],
  TE: ['Emisor', 'Receptor'],
  FEC: ['Proveedor (emisor)', 'Comprador que la emite (receptor)'],
  FEE: ['Exportador (emisor)', 'Comprador en el exterior (receptor)'],
  REP: ['Emisor', 'Pagador (receptor)'],
};

/** The line table's column titles that differ by kind: a recibo de pago's lines are payments. */
export function lineColumnTitles(kind: DocumentKind): { cantidad: string; precio: string } {
  return kind === 'REP' ? { cantidad: '', precio: 'Monto pagado' } : { cantidad: 'Cant.', precio: 'Precio unit.' };
}

/**
 * The printed cells of a line that depend on the kind: the code (CABYS, else the partida arancelaria), the detalle
 * (an exported good's partida arancelaria under it; a payment's IVA base when it differs from the amount paid), the
 * quantity and the price (a payment: blank and the amount paid without taxes).
 */
export function lineCells(kind: DocumentKind, l: ParsedComprobante['lineas'][number]): { codigo: string; detalle: string; cantidad: string; precio: string } {
  if (kind === 'REP') {
    const base = l.subTotal !== l.montoTotal ? `\nBase del IVA de este pago: ${formatAmount(l.subTotal)}` : '';
    return { codigo: '', detalle: `${l.detalle}${base}`, cantidad: '', precio: formatAmount(l.montoTotal) };
  }
  const partida = l.partidaArancelaria && l.codigoCABYS ? `\nPartida arancelaria ${l.partidaArancelaria}` : '';
  return {
    codigo: l.codigoCABYS ?? l.partidaArancelaria ?? l.codigoComercial[0]?.codigo ?? '',
    detalle: `${l.detalle}${partida}`,
    cantidad: `${l.cantidad !== undefined ? formatNumber(l.cantidad) : ''}${l.unidadMedida ? ` ${l.unidadMedida}` : ''}`,
    precio: formatAmount(l.precioUnitario),
  };
}

/** The acceptance state as printed. */
export function estadoLabel(state: DocumentRow['state']): string {
  if (state === 'aceptado') return 'Aceptado';
  if (state === 'rechazado') return 'Rechazado';
  if (state === 'error') return 'Error';
  return 'Pendiente';
}

// The one money formatter (src/core/money-format.ts), as the PDF's callers have imported it from here.
export { currencySymbol, formatAmount, formatNumber, formatRate, groupThousands };

export const MONEDA_NAMES: Record<string, string> = codeTable({ CRC: 'colón costarricense', USD: 'dólar estadounidense', EUR: 'euro' });

/** `2026-03-15T10:30:00-06:00` → `15/03/2026 10:30:00 (-06:00)`; anything else as is. */
export function formatFecha(iso: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}:\d{2}:\d{2})(?:\.\d+)?(Z|[+-]\d{2}:\d{2})?$/.exec(iso);
  if (!m) return iso;
  return `${m[3]}/${m[2]}/${m[1]} ${m[4]}${m[5] ? ` (${m[5] === 'Z' ? 'UTC' : m[5]})` : ''}`;
}

/** `2024-03-01T00:00:00-06:00` → `01/03/2024`; anything else as is. */
export function formatDia(iso: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(iso);
  return m ? `${m[3]}/${m[2]}/${m[1]}` : iso;
}

export function idLabel(tipo: string | undefined, numero: string | undefined): string {
  if (!numero) return '';
  const label = tipo ? (TIPOS_IDENTIFICACION[tipo]?.label ?? `Tipo ${tipo}`) : '';
  return label ? `${label} ${numero}` : numero;
}

export type Raw = Record<string, unknown>;
export function rawText(node: unknown): string | undefined {
  if (node === undefined || node === null) return undefined;
  if (typeof node === 'string') return node;
  if (Array.isArray(node)) return rawText(node[0]);
  if (typeof node === 'object') return rawText((node as Raw)['#text']);
  return undefined;
}
export function rawChild(node: unknown, name: string): unknown {
  if (Array.isArray(node)) node = node[0];
  return node && typeof node === 'object' ? (node as Raw)[name] : undefined;
}
export function rawList(node: unknown, name: string): unknown[] {
  const c = rawChild(node, name);
  return c === undefined ? [] : Array.isArray(c) ? c : [c];
}

export interface Party {
  nombre: string;
  nombreComercial?: string;
  identificacion: string;
  telefono?: string;
  correo?: string;
  /** Provincia, cantón and distrito by name (the codification), barrio. */
  ubicacion?: string;
  /** OtrasSenas (or OtrasSenasExtranjero). */
  direccion?: string;
  /** Economic activity code. */
  actividad?: string;
}

/**
 * `Barrio Escalante, distrito Carmen, cantón San José, provincia San José (1-01-01)` from an Ubicacion element, as a
 * Costa Rican address reads (the smallest part first): the names from Hacienda's codification
 * (src/core/catalog/ubicacion.ts), then the codes as the XML has them. A code the codification does not name is
 * printed as the code alone (`distrito 09`).
 */
export function ubicacionLabel(u: unknown): string | undefined {
  const provincia = rawText(rawChild(u, 'Provincia'));
  if (!provincia) return undefined;
  const canton = rawText(rawChild(u, 'Canton')) ?? '';
  const distrito = rawText(rawChild(u, 'Distrito')) ?? '';
  const barrio = rawText(rawChild(u, 'Barrio'));
  const n = ubicacionNames(provincia, canton, distrito);
  const parts = [
    barrio,
    distrito ? `distrito ${n.distrito ?? distrito}` : undefined,
    canton ? `cantón ${n.canton ?? canton}` : undefined,
    `provincia ${n.provincia ?? provincia}`,
  ].filter(Boolean);
  return `${parts.join(', ')} (${[provincia, canton, distrito].filter(Boolean).join('-')})`;
}

/**
 * The summary's taxes by tarifa, from the XML's TotalDesgloseImpuesto: `IVA 13 %`, `IVA 4 %`, `IVA exento`, other
 * taxes by name; one row per entry, in the XML's order, with its TotalMontoImpuesto.
 */
export function desgloseRows(desglose: ParsedComprobante['resumen']['totalDesgloseImpuesto']): [string, string][] {
  return desglose.map((d) => {
    if (d.codigo !== '01') return [CODIGOS_IMPUESTO[d.codigo] ?? `Impuesto ${d.codigo}`, d.totalMontoImpuesto];
    const t = d.codigoTarifaIVA ? TARIFAS_IVA[d.codigoTarifaIVA] : undefined;
    const label = !t ? 'IVA' : d.codigoTarifaIVA === '10' ? 'IVA exento' : `IVA ${formatNumber(t.rate)} %`;
    return [label, d.totalMontoImpuesto];
  });
}

/** Issuer and receiver details the typed parser does not keep (nombre comercial, phone, location). */
export function parties(body: Raw, doc: ParsedComprobante): { emisor: Party; receptor?: Party } {
  const phone = (p: unknown) => {
    const t = rawChild(p, 'Telefono');
    const n = rawText(rawChild(t, 'NumTelefono'));
    if (!n) return undefined;
    const c = rawText(rawChild(t, 'CodigoPais'));
    return c ? `+${c} ${n}` : n;
  };
  const e = rawChild(body, 'Emisor');
  const r = rawChild(body, 'Receptor');
  const emisor: Party = {
    nombre: doc.emisor.nombre,
    identificacion: idLabel(doc.emisor.identificacion.tipo, doc.emisor.identificacion.numero),
  };
  const nc = rawText(rawChild(e, 'NombreComercial'));
  if (nc) emisor.nombreComercial = nc;
  const tel = phone(e);
  if (tel) emisor.telefono = tel;
  if (doc.emisor.correoElectronico.length > 0) emisor.correo = doc.emisor.correoElectronico.join(', ');
  const ub = ubicacionLabel(rawChild(e, 'Ubicacion'));
  if (ub) emisor.ubicacion = ub;
  const sen = rawText(rawChild(rawChild(e, 'Ubicacion'), 'OtrasSenas')) ?? rawText(rawChild(e, 'OtrasSenasExtranjero'));
  if (sen) emisor.direccion = sen;
  if (doc.codigoActividadEmisor) emisor.actividad = doc.codigoActividadEmisor;
  if (!doc.receptor) return { emisor };
  const receptor: Party = {
    nombre: doc.receptor.nombre,
    identificacion: idLabel(doc.receptor.identificacion?.tipo, doc.receptor.identificacion?.numero),
  };
  const rnc = rawText(rawChild(r, 'NombreComercial'));
  if (rnc) receptor.nombreComercial = rnc;
  const rtel = phone(r);
  if (rtel) receptor.telefono = rtel;
  if (doc.receptor.correoElectronico) receptor.correo = doc.receptor.correoElectronico;
  const rub = ubicacionLabel(rawChild(r, 'Ubicacion'));
  if (rub) receptor.ubicacion = rub;
  const rsen = rawText(rawChild(rawChild(r, 'Ubicacion'), 'OtrasSenas')) ?? rawText(rawChild(r, 'OtrasSenasExtranjero'));
  if (rsen) receptor.direccion = rsen;
  if (doc.codigoActividadReceptor) receptor.actividad = doc.codigoActividadReceptor;
  return { emisor, receptor };
}

/** NombreInstitucionOtros of each exoneración (the typed parser does not keep it), by line and tax index. */
export function institucionesOtros(body: Raw): (string | undefined)[][] {
  return rawList(rawChild(body, 'DetalleServicio'), 'LineaDetalle').map((l) =>
    rawList(l, 'Impuesto').map((i) => rawText(rawChild(rawChild(i, 'Exoneracion'), 'NombreInstitucionOtros'))),
  );
}

/** The printed lines of one exoneración: the document, then the institution, date, rate and amounts. */
export function exoneracionLines(imp: ParsedImpuesto, x: ParsedExoneracion, institucionOtros: string | undefined, money: (v: string) => string, named: boolean): string[] {
  const tipo = TIPOS_EXONERACION[x.tipoDocumento]?.label;
  const documento =
    `${x.tipoDocumento}${tipo ? ` ${tipo}` : ''}${x.tipoDocumentoOtro ? ` (${x.tipoDocumentoOtro})` : ''}` +
    ` · Documento ${x.numeroDocumento}${x.articulo ? `, artículo ${x.articulo}` : ''}${x.inciso ? `, inciso ${x.inciso}` : ''}`;
  const institucion = INSTITUCIONES_EXONERACION[x.nombreInstitucion];
  const impuesto = named ? ` (${CODIGOS_IMPUESTO[imp.codigo] ?? `impuesto ${imp.codigo}`})` : '';
  const neto = dec(imp.monto).minus(dec(x.montoExoneracion)).toString();
  return [
    `Exoneración${impuesto}: ${documento}`,
    `Institución: ${x.nombreInstitucion}${institucion ? ` ${institucion}` : ''}${institucionOtros ? ` (${institucionOtros})` : ''}` +
      ` · Fecha: ${formatDia(x.fechaEmision)} · Tarifa exonerada: ${formatNumber(x.tarifaExonerada)} %`,
    `Impuesto: ${money(imp.monto)} · Monto exonerado: ${money(x.montoExoneracion)} · Impuesto neto: ${money(neto)}`,
  ];
}

export function isNonZero(v: string | undefined): v is string {
  if (v === undefined || v.trim() === '') return false;
  try {
    return !dec(v).isZero();
  } catch {
    return true;
  }
}

/** At most this many characters of Hacienda's text on the PDF (a list of hundreds of line errors is cut, with "…"). */
const DETALLE_MAX = 1500;
/** What a font has no glyph for and pdfkit would draw as a box: control characters (C0 but LF, DEL, C1). */
const UNPRINTABLE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]+/g;

/**
 * Hacienda's DetalleMensaje as the PDF prints it, one string per printed line: its list, one item a line
 * (`-408 El Código …`, `aviso: -37 …`), when it lists something; else its own lines (CR LF or LF ends one), without
 * empty ones. No control character is left (pdfkit draws a CR as a missing-glyph box); at most DETALLE_MAX characters.
 */
export function detalleLines(detalle: string | null | undefined, aceptado: boolean): string[] {
  const errores = parseDetalleMensaje(detalle, { aceptado });
  const lines = errores.length > 0 ? errores.map((e) => `${e.aviso ? 'aviso: ' : ''}${errorLine(e)}`) : (detalle ?? '').split(/\r\n|\r|\n/);
  const out: string[] = [];
  let left = DETALLE_MAX;
  for (const raw of lines) {
    const line = raw.replace(UNPRINTABLE, ' ').trim();
    if (line === '') continue;
    if (left <= 0) break;
    out.push(line.length > left ? `${line.slice(0, left)}…` : line);
    left -= line.length;
  }
  return out;
}
