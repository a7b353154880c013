/**
 * The emulator's test suppliers, asked over HTTP (`POST /_emulator/suppliers/issue`, src/emulator/routes-suppliers.ts):
 * one request shape for `fecr hacienda serve --supplier-invoices`, `fecr hacienda suppliers issue --url` (a running
 * emulator) and a local profile's embedded emulator (client/recibidos-local.ts: `fecr demo`, `fecr hacienda suppliers
 * issue` without --url). With `waitMs`, the emulator answers once it has decided each document (or the wait ended), so
 * the buyer can answer it right away (a MensajeReceptor needs the comprobante accepted by Hacienda: issue 26).
 */
export const SUPPLIER_DOC_KINDS = ['FE', 'NC', 'ND', 'FEC'] as const;
export type SupplierDocKind = (typeof SUPPLIER_DOC_KINDS)[number];

export interface SupplierIssueRequest {
  receptor: { tipo: string; numero: string; nombre?: string };
  count: number;
  tipo?: SupplierDocKind;
  /** A test supplier's identificación (default: the emulator picks one per document). */
  proveedor?: string;
  /** NC/ND: the clave of a document this emulator received. */
  referencia?: string;
  /** Wait up to this long for the emulator's verdict on each document (0 or absent: do not wait). */
  waitMs?: number;
}

export interface SupplierIssued {
  clave: string;
  tipo: SupplierDocKind;
  proveedor: { identificacion: string; nombre: string };
  /** The emulator's state of the document when it answered: aceptado/rechazado once decided, else recibido/procesando. */
  estado?: string;
  bytes: Buffer;
}

/** Thrown when the emulator refuses the request or cannot be reached: `message` says why in one line. */
export class SupplierIssueError extends Error {
  constructor(
    message: string,
    readonly issues: string[] = [],
  ) {
    super(message);
  }
}

export async function issueSupplierDocuments(baseUrl: string, req: SupplierIssueRequest): Promise<SupplierIssued[]> {
  let res: Response;
  try {
    res = await fetch(`${baseUrl.replace(/\/+$/, '')}/_emulator/suppliers/issue`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        receptor: req.receptor,
        cantidad: req.count,
        ...(req.tipo ? { tipo: req.tipo } : {}),
        ...(req.proveedor ? { proveedor: req.proveedor } : {}),
        ...(req.referencia ? { referencia: req.referencia } : {}),
        ...(req.waitMs ? { esperarMs: req.waitMs } : {}),
      }),
    });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    const { describeNetworkCode } = await import('../hacienda/client/describe.js');
    throw new SupplierIssueError(`cannot reach the emulator at ${baseUrl}: ${cause?.code ? describeNetworkCode(cause.code, baseUrl) : (cause?.message ?? (e as Error).message)}`);
  }
  let body: { documentos?: { clave: string; tipo: SupplierDocKind; proveedor: { identificacion: string; nombre: string }; estado?: string; xml: string }[]; error?: string; issues?: string[] };
  try {
    body = (await res.json()) as typeof body;
  } catch {
    throw new SupplierIssueError(`${baseUrl} answered ${res.status} without JSON: is it a fecr emulator (fecr hacienda serve)?`);
  }
  if (!res.ok || !body.documentos) {
    const why = res.status === 404 && !body.error ? `${baseUrl} has no test suppliers (is it a fecr emulator?)` : `the emulator's suppliers could not issue: ${body.error ?? res.status}`;
    throw new SupplierIssueError(why, body.issues ?? []);
  }
  return body.documentos.map((d) => ({ clave: d.clave, tipo: d.tipo, proveedor: d.proveedor, ...(d.estado ? { estado: d.estado } : {}), bytes: Buffer.from(d.xml, 'base64') }));
}
