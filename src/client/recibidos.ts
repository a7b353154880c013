/**
 * The buyer's side as the CLI verbs see it (`fecr recibidos …`), in local mode (the use cases in process:
 * recibidos-local.ts) or remote mode (the client API's /api/recibidos endpoints: RemoteRecibidos below). Same shapes
 * as the service's (service/recibidos/), in both modes.
 */
import type { SupplierIssued, SupplierIssueRequest } from './emulator-suppliers.js';
import type { DecisionResult } from '../service/recibidos/decide.js';
import type { ImportFile, ImportResult } from '../service/recibidos/import.js';
import type { ExcludedDocument, IssuerMonthlySummary, MonthlySummary, RecibidoDetail, RecibidoFile, RecibidosQuery, RecibidoSummary, SituacionIva } from '../service/recibidos/queries.js';

export type { DecisionResult, ExcludedDocument, ImportFile, IssuerMonthlySummary, ImportResult, MonthlySummary, RecibidoDetail, RecibidoFile, RecibidosQuery, RecibidoSummary, SituacionIva };

export interface DecideOptions {
  decision: 'aceptar' | 'parcial' | 'rechazar';
  detalle?: string;
  condicionImpuesto?: string;
  ivaAcreditable?: string;
  gastoAplicable?: string;
  /** Answer even though Hacienda has no record of the comprobante (`--force`; the API's `forzar`). */
  forzar?: boolean;
}

export interface RecibidosApi {
  /** Checks and stores a batch of supplier files (one result per file, in order; `size`: see ImportFile). */
  import(files: ImportFile[]): Promise<ImportResult[]>;
  list(q: RecibidosQuery): Promise<RecibidoSummary[]>;
  show(clave: string): Promise<RecibidoDetail | null>;
  /** Queues the MensajeReceptor; with `waitMs`, waits (up to then) for Hacienda's verdict on it. */
  decide(clave: string, d: DecideOptions, opts?: { waitMs?: number }): Promise<{ result: DecisionResult; detail: RecibidoDetail | null }>;
  /** One issuer's month of purchases (`emisor`: the buyer's identificación), or, without it, one per issuer (issue 36). */
  summary(mes: string, emisor: string): Promise<IssuerMonthlySummary>;
  summaries(mes: string): Promise<IssuerMonthlySummary[]>;
  file(clave: string, type: RecibidoFile): Promise<Buffer | null>;
  /**
   * Local mode with the embedded emulator only (`fecr demo`, `fecr hacienda suppliers issue`): its test suppliers
   * issue signed comprobantes to the receptor (client/emulator-suppliers.ts); returns each file. Absent elsewhere.
   */
  supplierInvoices?(req: SupplierIssueRequest): Promise<SupplierIssued[]>;
}

/**
 * Bytes per request in remote mode (base64, which grows by a third): the service takes 1 MiB bodies, and on
 * /api/recibidos one document up to its size limit, which then goes alone in its request.
 */
export const REMOTE_BATCH_BYTES = 600 * 1024;

type Call = <T>(path: string, body: unknown, nullOn404?: boolean) => Promise<T | null>;

const FINAL = ['aceptado', 'rechazado', 'error'];

export class RemoteRecibidos implements RecibidosApi {
  constructor(
    private readonly call: Call,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {}

  async import(files: ImportFile[]): Promise<ImportResult[]> {
    const out: ImportResult[] = [];
    let batch: { xml: string; nombre: string; tamano?: number }[] = [];
    let size = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      const r = await this.call<{ data: ImportResult[] }>('/api/recibidos', { documentos: batch });
      out.push(...(r?.data ?? []));
      batch = [];
      size = 0;
    };
    for (const f of files) {
      const xml = Buffer.from(f.bytes).toString('base64');
      if (batch.length > 0 && (size + xml.length > REMOTE_BATCH_BYTES || batch.length >= 200)) await flush();
      // A file read only up to the limit + 1 bytes goes with its size: the service refuses it unread.
      batch.push({ xml, nombre: f.name, ...(f.size !== undefined && f.size > f.bytes.length ? { tamano: f.size } : {}) });
      size += xml.length;
    }
    await flush();
    return out;
  }

  async list(q: RecibidosQuery): Promise<RecibidoSummary[]> {
    const r = await this.call<{ data: RecibidoSummary[] }>('/api/recibidos/consultar', {
      ...(q.estado ? { estado: q.estado } : {}),
      ...(q.desde ? { desde: q.desde } : {}),
      ...(q.emisor ? { emisor: q.emisor } : {}),
      ...(q.limit ? { limite: q.limit } : {}),
    });
    return r?.data ?? [];
  }

  async show(clave: string): Promise<RecibidoDetail | null> {
    return (await this.call<{ data: RecibidoDetail }>('/api/recibidos/detalle', { clave }, true))?.data ?? null;
  }

  async decide(clave: string, d: DecideOptions, opts: { waitMs?: number } = {}): Promise<{ result: DecisionResult; detail: RecibidoDetail | null }> {
    const r = await this.call<{ data: DecisionResult }>('/api/recibidos/decidir', { clave, ...d });
    const result = r!.data;
    let detail = await this.show(clave);
    const deadline = Date.now() + (opts.waitMs ?? 0);
    let pause = 250;
    while (detail && !FINAL.includes(detail.respuestaEstado ?? '') && Date.now() < deadline) {
      await this.sleep(pause);
      pause = Math.min(2_000, pause * 1.5);
      detail = await this.show(clave);
    }
    return { result, detail };
  }

  async summary(mes: string, emisor: string): Promise<IssuerMonthlySummary> {
    return (await this.call<{ data: IssuerMonthlySummary }>('/api/recibidos/resumen', { mes, emisor }))!.data;
  }

  /** Without `emisor` the route answers one summary per issuer (issue 36). */
  async summaries(mes: string): Promise<IssuerMonthlySummary[]> {
    return (await this.call<{ data: IssuerMonthlySummary[] }>('/api/recibidos/resumen', { mes }))!.data;
  }

  async file(clave: string, type: RecibidoFile): Promise<Buffer | null> {
    const r = await this.call<{ data: { encodedFile: string } }>('/api/recibidos/archivo', { clave, fileType: type }, true);
    return r ? Buffer.from(r.data.encodedFile, 'base64') : null;
  }
}
