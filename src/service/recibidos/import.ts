/**
 * Import of suppliers' comprobantes (issue 16): each file is checked before anything is stored (core/received/check.ts
 * for what the bytes say; here the XSD, whether the buyer is one of the account's issuers, and the state at Hacienda,
 * GET recepción/{clave} with the buyer's credentials, keeping the MensajeHacienda), then stored in ONE statement with
 * its webhook event: `pendiente` when every check passed, `invalido` with every finding otherwise (never half stored).
 * Idempotent: the same bytes imported again return the stored row (per account and sha256).
 *
 * An importer keeps its XSD validator and Hacienda clients across batches (a folder is imported in batches).
 */
import { createXsdValidator, type XsdValidator } from '../../adapters/xsd/index.js';
import { analyzeReceived, type ReceivedAnalysis } from '../../core/received/check.js';
import type { Finding } from '../../core/model.js';
import type { SchemaName } from '../../core/xml/kinds.js';
import { ReceptionClient, type ReceptionStatus } from '../../hacienda/index.js';
import type { Issuer, RecibidoEstado } from '../../store/schema.js';
import type { ServiceContext } from '../context.js';
import { decodeClaveHacienda } from '../delivery/worker.js';
import { isUniqueViolation, issuerSecretsContext, type IssuerSecrets, type StoredIssuerRecord } from '../issuers.js';
import { queueRecibidoEvent } from './events.js';

export interface ImportFile {
  /** What the caller calls it (a file name, `-`, `body`): echoed in the result. */
  name: string;
  bytes: Uint8Array;
}

export interface ImportResult {
  archivo: string;
  id: number;
  clave: string | null;
  estado: RecibidoEstado;
  /** False when the same bytes had been imported before (nothing stored this time). */
  creado: boolean;
  tipo: string | null;
  emisor: string | null;
  totalComprobante: string | null;
  haciendaEstado: string | null;
  hallazgos: Finding[];
  avisos: Finding[];
}

interface Checked {
  file: ImportFile;
  a: ReceivedAnalysis;
  issuer?: Issuer;
  hacienda?: ReceptionStatus;
}

const stripZeros = (s: string) => s.replace(/^0+/, '');

export class RecibidosImporter {
  private xsd: XsdValidator | undefined;
  private readonly clients = new Map<number, ReceptionClient>();
  private issuers: Map<string, Issuer> | undefined;

  /**
   * `beforeHacienda`: awaited before the first question to Hacienda (local mode starts its emulator meanwhile, while
   * the first files are read and checked).
   */
  constructor(
    private readonly ctx: ServiceContext,
    private readonly accountId: number,
    private readonly beforeHacienda?: () => Promise<void>,
  ) {}

  /** Checks and stores a batch; results in the order of `files`. */
  async importMany(files: ImportFile[]): Promise<ImportResult[]> {
    const now = new Date(this.ctx.now());
    const checked: Checked[] = files.map((file) => ({ file, a: analyzeReceived(file.bytes, now) }));
    const known = await this.existing(checked.map((c) => c.a.sha256));
    const fresh = checked.filter((c) => !known.has(c.a.sha256));
    await this.checkXsd(fresh);
    await this.checkBuyer(fresh);
    await this.checkHacienda(fresh);
    const out: ImportResult[] = [];
    const stored = new Map<string, ImportResult>();
    for (const c of checked) {
      const prior = known.get(c.a.sha256) ?? stored.get(c.a.sha256);
      if (prior) {
        out.push({ ...prior, archivo: c.file.name, creado: false });
        continue;
      }
      const r = await this.store(c);
      stored.set(c.a.sha256, r);
      out.push(r);
    }
    return out;
  }

  async close(): Promise<void> {
    await this.xsd?.close?.();
    await Promise.allSettled([...this.clients.values()].map((c) => c.close()));
  }

  // --- checks ----------------------------------------------------------------------------------------

  private async checkXsd(list: Checked[]): Promise<void> {
    const bySchema = new Map<SchemaName, Checked[]>();
    for (const c of list) {
      if (!c.a.xsd || c.a.text === undefined) continue;
      bySchema.set(c.a.xsd, [...(bySchema.get(c.a.xsd) ?? []), c]);
    }
    for (const [schema, group] of bySchema) {
      this.xsd ??= createXsdValidator({ persistentShell: true });
      const results = await this.xsd.validate(
        group.map((c) => c.a.text!),
        schema,
      );
      group.forEach((c, i) => {
        const r = results[i];
        // Hacienda lists the first schema error only; so does this finding.
        if (r && !r.valid) c.a.findings.unshift({ path: 'xsd', message: `not valid against ${schema} v4.4: ${r.errors[0]?.message ?? 'invalid'}` });
      });
    }
  }

  private async checkBuyer(list: Checked[]): Promise<void> {
    if (!this.issuers) {
      const rows = await this.ctx.store.db.selectFrom('issuers').selectAll().where('account_id', '=', this.accountId).execute();
      this.issuers = new Map(rows.map((r) => [stripZeros(r.identificacion), r]));
    }
    for (const c of list) {
      if (!c.a.clave) continue;
      const buyer = c.a.buyer;
      const issuer = buyer ? this.issuers.get(stripZeros(buyer.numero)) : undefined;
      if (issuer) c.issuer = issuer;
      else {
        const who = c.a.kind === 'FEC' ? 'Emisor' : 'Receptor';
        c.a.findings.push({
          path: `${who}/Identificacion/Numero`,
          message: buyer ? `${buyer.numero} is not an issuer of this account: the comprobante is not addressed to us` : `the comprobante has no ${who} identificación: it is not addressed to us`,
        });
      }
    }
  }

  /** GET recepción/{clave} for each document that passed every other check (8 at a time). */
  private async checkHacienda(list: Checked[]): Promise<void> {
    const todo = list.filter((c) => c.issuer && c.a.findings.length === 0);
    if (todo.length > 0) await this.beforeHacienda?.();
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < todo.length; i = next++) {
        const c = todo[i]!;
        try {
          c.hacienda = await this.clientFor(c.issuer!).getStatus(c.a.clave!);
        } catch (e) {
          c.a.warnings.push({ path: 'hacienda', message: `the state at Hacienda could not be asked: ${e instanceof Error ? e.message : String(e)}` });
          continue;
        }
        const st = c.hacienda;
        if (st.estado === 'rechazado') {
          c.a.findings.push({ path: 'hacienda', message: `Hacienda rejected this comprobante${st.mensaje?.detalleMensaje ? `: ${st.mensaje.detalleMensaje.split('\n')[0]}` : ''}` });
        } else if (st.estado === 'unknown') c.a.warnings.push({ path: 'hacienda', message: 'Hacienda does not know this clave (yet): ask again before answering it' });
        else if (st.estado !== 'aceptado') c.a.warnings.push({ path: 'hacienda', message: `Hacienda has not decided yet (ind-estado ${st.indEstado ?? st.estado})` });
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, todo.length) }, worker));
  }

  private clientFor(issuer: Issuer): ReceptionClient {
    let client = this.clients.get(issuer.id);
    if (!client) {
      const record = JSON.parse(issuer.record_json) as StoredIssuerRecord;
      const secrets = this.ctx.secrets.openJson<IssuerSecrets>(issuer.secrets_enc, issuerSecretsContext(issuer.account_id, issuer.identificacion));
      client = new ReceptionClient({
        endpoints: this.ctx.hacienda.endpoints,
        credentials: { username: record.usuarioHacienda, password: decodeClaveHacienda(secrets.claveHacienda) },
        now: this.ctx.now,
        statusRetry: { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 2_000, maxServerWaitMs: 5_000 },
      });
      this.clients.set(issuer.id, client);
    }
    return client;
  }

  // --- store -----------------------------------------------------------------------------------------

  private async existing(shas: string[]): Promise<Map<string, ImportResult>> {
    const out = new Map<string, ImportResult>();
    if (shas.length === 0) return out;
    const rows = await this.ctx.store.db.selectFrom('recibidos').selectAll().where('account_id', '=', this.accountId).where('sha256', 'in', [...new Set(shas)]).execute();
    for (const r of rows) out.set(r.sha256, resultOfRow(r, '', false));
    return out;
  }

  private async store(c: Checked): Promise<ImportResult> {
    const { a } = c;
    const now = this.ctx.now();
    const estado: RecibidoEstado = a.findings.length > 0 ? 'invalido' : 'pendiente';
    const row = {
      account_id: this.accountId,
      issuer_id: c.issuer?.id ?? null,
      sha256: a.sha256,
      clave: a.clave ?? null,
      kind: a.kind ?? null,
      version: a.version ?? null,
      estado,
      emisor_tipo: a.emisor?.tipo ?? null,
      emisor_numero: a.emisor?.numero ?? null,
      emisor_nombre: a.emisor?.nombre ?? null,
      receptor_tipo: a.receptor?.tipo ?? null,
      receptor_numero: a.receptor?.numero ?? null,
      fecha_emision: a.fechaEmision ?? null,
      moneda: a.moneda ?? null,
      tipo_cambio: a.tipoCambio ?? null,
      total_comprobante: a.totalComprobante ?? null,
      total_impuesto: a.totalImpuesto ?? null,
      iva_json: JSON.stringify(a.iva),
      hallazgos_json: JSON.stringify(a.findings),
      avisos_json: JSON.stringify(a.warnings),
      xml: a.text ?? Buffer.from(c.file.bytes).toString('latin1'),
      hacienda_estado: c.hacienda?.estado ?? null,
      hacienda_xml: c.hacienda?.respuestaXml ? c.hacienda.respuestaXml.toString('utf8') : null,
      mensaje: null,
      detalle: null,
      condicion_impuesto: null,
      iva_acreditable: null,
      gasto_aplicable: null,
      mensaje_document_id: null,
      created_at: now,
      updated_at: now,
      decided_at: null,
    };
    try {
      const id = await this.ctx.store.db.transaction().execute(async (trx) => {
        const inserted = await trx.insertInto('recibidos').values(row).returning('id').executeTakeFirstOrThrow();
        await queueRecibidoEvent(trx, now, {
          accountId: this.accountId,
          recibidoId: inserted.id,
          folioId: a.clave ?? a.sha256,
          event: { type: 'recibido.importado', estado, emisor: a.emisor?.numero ?? null, totalComprobante: a.totalComprobante ?? null, hallazgos: a.findings, avisos: a.warnings },
        });
        return Number(inserted.id);
      });
      this.ctx.logger.info({ accountId: this.accountId, clave: a.clave, estado }, 'received document imported');
      return resultOfRow({ ...row, id }, c.file.name, true);
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      // Imported concurrently by another request: the same bytes, the stored row.
      const prior = (await this.existing([a.sha256])).get(a.sha256);
      if (!prior) throw e;
      return { ...prior, archivo: c.file.name };
    }
  }
}

export function resultOfRow(
  r: { id: number; clave: string | null; estado: RecibidoEstado; kind: string | null; emisor_numero: string | null; total_comprobante: string | null; hacienda_estado: string | null; hallazgos_json: string; avisos_json: string },
  archivo: string,
  creado: boolean,
): ImportResult {
  return {
    archivo,
    id: Number(r.id),
    clave: r.clave,
    estado: r.estado,
    creado,
    tipo: r.kind,
    emisor: r.emisor_numero,
    totalComprobante: r.total_comprobante,
    haciendaEstado: r.hacienda_estado,
    hallazgos: JSON.parse(r.hallazgos_json) as Finding[],
    avisos: JSON.parse(r.avisos_json) as Finding[],
  };
}

/** Imports one batch with a short-lived importer. */
export async function importRecibidos(ctx: ServiceContext, accountId: number, files: ImportFile[]): Promise<ImportResult[]> {
  const importer = new RecibidosImporter(ctx, accountId);
  try {
    return await importer.importMany(files);
  } finally {
    await importer.close();
  }
}
