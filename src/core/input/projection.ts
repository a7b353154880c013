/**
 * A body that fails its schema only in some parts is still judged in the others: its schema findings come back with
 * every rule and figure finding of the parts that parsed, in one run (issue 26). The failing parts ("held" parts: a
 * whole line, a charge, a payment method, a reference, the receptor, one top-level field, one total of the resumen)
 * are replaced by placeholders that parse, the rest is parsed for real, and whatever the rules and figures then say
 * at a held path (or about the resumen when a line or a charge is held: its totals add up the held one) is left out,
 * since it would only be a consequence of the schema finding already reported there.
 */
import type { z } from 'zod';
import type { Finding } from '../model.js';
import { findingsFromZod, formatPath, leafIssues, withoutKeys } from './findings.js';
import { RESUMEN_TOTAL_FIELDS, type DocumentBody, type RepDocumentBody } from './schema.js';

type BodySchema = typeof DocumentBody | typeof RepDocumentBody;

/** The parts of a body that did not parse, as paths: a finding at (or under) one of them is a consequence. */
export class Held {
  private readonly prefixes = new Set<string>();
  private readonly exact = new Set<string>();
  /** A line or a charge is held: every total of the resumen adds it up. */
  resumen = false;

  add(path: string): void {
    this.prefixes.add(path);
  }

  /** A path whose rule reads a held value (e.g. plazoCredito, required by condicionVenta): only that path. */
  addExact(...paths: string[]): void {
    for (const p of paths) this.exact.add(p);
  }

  isEmpty(): boolean {
    return this.prefixes.size === 0 && this.exact.size === 0 && !this.resumen;
  }

  /** Whether a finding at `path` would only follow from a held part (the resumen's figures are not computed: see `resumen`). */
  covers(path: string): boolean {
    if (this.exact.has(path)) return true;
    for (const p of this.prefixes) if (path === p || path.startsWith(`${p}.`) || path.startsWith(`${p}[`)) return true;
    return false;
  }

  paths(): string[] {
    return [...this.prefixes, ...this.exact];
  }
}

/** What the rules read of condicionVenta: held with it. */
const CONDICION_VENTA_READERS = [
  'condicionVentaOtros',
  'plazoCredito',
  'resumenFactura.mediosPago',
  'receptor.identificacion.tipo',
  'proveedor.identificacion.tipo',
];

/** Valid stand-ins for a held part, never judged (every finding at their path is a consequence). */
const TAX = { codigo: '01', codigoTarifa: '10', tarifa: '0', monto: '0' };
const LINE = {
  numeroLinea: 1, codigo: '8314100000000', detalle: 'held line', cantidad: 1, unidadMedida: 'Sp', precioUnitario: '1', subTotal: '1',
  montoTotal: '1', impuestoNeto: '0', montoTotalLinea: '1', impuesto: [TAX],
};
const REP_LINE = { numeroLinea: 1, detalle: 'held line', subTotal: '1', montoTotal: '1', impuesto: [TAX], impuestoNeto: '0', montoTotalLinea: '1' };
const ID = { tipo: '02', numero: '3101000000' };
/** Top-level fields the body cannot do without (an optional one that fails is removed, but for the proveedor). */
const TOP: Record<string, unknown> = {
  emisor: '3101000000',
  numeroReferencia: 1,
  codigoActividad: '6201.0',
  tipoDoc: '',
  folioType: 'INVOICE',
  fechaEmision: '2000-01-01T00:00:00-06:00',
  receptor: { nombre: 'held receptor', identificacion: ID },
  // An FEC's figures are computed once it has one: a held one stands in.
  proveedor: { nombre: 'held proveedor', identificacion: ID },
};
const ELEMENT: Record<string, unknown> = {
  otrosCargos: { tipoDocumento: '06', detalle: 'held charge', montoCargo: '1' },
  informacionReferencia: { tipoDocIR: '13', numero: 'held', fechaEmision: '2000-01-01T00:00:00-06:00' },
  mediosPago: { tipoMedioPago: '01' },
  codigoTipoMoneda: { codigoMoneda: 'CRC' },
};

type Parsed<S extends BodySchema> = { success: true; data: z.output<S>; findings: Finding[]; held: Held } | { success: false; findings: Finding[] };

/**
 * Parses a body with its schema. On failure, each failing part is held (replaced by a placeholder) and the body
 * parsed again: `data` then has the parts that parsed, `findings` every schema finding (unknown keys included), and
 * `held` the parts to leave unjudged. A failure the body cannot be judged around (not an object, detalleServicio not
 * a list of 1 to 1000 lines, …) gives the schema findings alone.
 */
export function parseHolding<S extends BodySchema>(schema: S, body: unknown): Parsed<S> {
  const first = schema.safeParse(body);
  if (first.success) return { success: true, data: first.data as z.output<S>, findings: [], held: new Held() };
  const findings = findingsFromZod(first.error);
  const held = new Held();
  let projected = body;
  for (const leaf of first.error.issues.flatMap(leafIssues)) {
    if (leaf.code === 'unrecognized_keys') {
      projected = withoutKeys(projected, leaf.path.slice(0, -1), leaf.keys);
      continue;
    }
    const next = holdPart(projected, leaf.path, held, schema);
    if (next === undefined) return { success: false, findings };
    projected = next;
  }
  const second = schema.safeParse(projected);
  if (!second.success) return { success: false, findings };
  return { success: true, data: second.data as z.output<S>, findings, held };
}

const isIndex = (k: PropertyKey | undefined): k is number => typeof k === 'number';

/** The body with the part holding `path` replaced (or, optional, removed); undefined when it cannot be. */
function holdPart(body: unknown, path: readonly PropertyKey[], held: Held, schema: BodySchema): unknown {
  const [top, second, third] = path;
  if (typeof top !== 'string' || body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const set = (at: PropertyKey[], value: unknown) => {
    held.add(formatPath(at));
    return withValue(body, at, value);
  };
  if (top === 'detalleServicio' || top === 'otrosCargos' || top === 'informacionReferencia') {
    if (!isIndex(second)) return undefined;
    if (top !== 'informacionReferencia') held.resumen = true;
    const placeholder = top === 'detalleServicio' ? (schema.shape.detalleServicio.element.safeParse(LINE).success ? LINE : REP_LINE) : ELEMENT[top];
    return set([top, second], top === 'detalleServicio' ? { ...(placeholder as object), numeroLinea: second + 1 } : placeholder);
  }
  if (top === 'resumenFactura') {
    if (second === 'mediosPago' && isIndex(third)) return set([top, second, third], ELEMENT.mediosPago);
    if (second === 'codigoTipoMoneda') return set([top, second], ELEMENT.codigoTipoMoneda);
    if (typeof second === 'string' && (RESUMEN_TOTAL_FIELDS as readonly string[]).includes(second)) return set([top, second], undefined);
    return undefined;
  }
  if (top === 'correosAdicionales') return set([top], undefined);
  if (top === 'condicionVenta') held.addExact(...CONDICION_VENTA_READERS);
  const field = (schema.shape as Record<string, z.ZodType>)[top];
  if (!field) return undefined;
  if (top in TOP) return set([top], TOP[top]);
  return field.safeParse(undefined).success ? set([top], undefined) : undefined;
}

/** A copy of `value` with `path` set to `v` (removed when undefined); only the containers along the path are copied. */
function withValue(value: unknown, path: readonly PropertyKey[], v: unknown): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return v;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<PropertyKey, unknown>;
  const inner = rest.length === 0 ? v : withValue(copy[head] !== null && typeof copy[head] === 'object' ? copy[head] : {}, rest, v);
  if (inner === undefined && !Array.isArray(copy)) delete copy[head];
  else copy[head] = inner;
  return copy;
}

/** Compares two finding paths field by field, list indexes as numbers: `detalleServicio[2]` before `detalleServicio[10]`. */
export function comparePaths(a: string, b: string): number {
  const pa = a.split(/[.[\]]+/).filter(Boolean);
  const pb = b.split(/[.[\]]+/).filter(Boolean);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = pa[i]!;
    const y = pb[i]!;
    if (x === y) continue;
    const nx = /^\d+$/.test(x) ? Number(x) : NaN;
    const ny = /^\d+$/.test(y) ? Number(y) : NaN;
    if (!Number.isNaN(nx) && !Number.isNaN(ny)) return nx - ny;
    return x < y ? -1 : 1;
  }
  return pa.length - pb.length;
}

/** Findings without repeats (same path and message), ordered by path (stable: one path's findings keep their order). */
export function orderFindings(findings: readonly Finding[]): Finding[] {
  const seen = new Set<string>();
  const out: Finding[] = [];
  for (const f of findings) {
    const key = `${f.path}\u0000${f.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(f);
  }
  return out.sort((a, b) => comparePaths(a.path, b.path));
}
