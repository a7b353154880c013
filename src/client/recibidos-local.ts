/**
 * The buyer's side in local mode: the use cases of service/recibidos/ in this process, on the profile's data dir.
 * Import asks the Hacienda of the profile (in env local the embedded emulator, started for it) for each document's
 * state; a decision queues the MensajeReceptor and this command's worker sends it and, when asked to wait, follows
 * it to Hacienda's verdict (service/local-run.ts), as `fecr send --wait` does for a comprobante.
 */
import type { ServiceContext } from '../service/context.js';
import type { LocalRun } from '../service/local-run.js';
import { mapped } from './service-errors.js';
import { BackendError } from './backend.js';
import type { SupplierIssued, SupplierIssueRequest } from './emulator-suppliers.js';
import type { DecideOptions, RecibidosApi } from './recibidos.js';
import type { DecisionResult, ImportFile, ImportResult, IssuerMonthlySummary, RecibidoDetail, RecibidoFile, RecibidosQuery, RecibidoSummary } from './recibidos.js';

export class LocalRecibidos implements RecibidosApi {
  private importer: import('../service/recibidos/import.js').RecibidosImporter | undefined;

  constructor(
    private readonly svc: ServiceContext,
    private readonly run: LocalRun,
    private readonly accountId: () => Promise<number>,
  ) {}

  async import(files: ImportFile[]): Promise<ImportResult[]> {
    const [{ RecibidosImporter }, id] = await Promise.all([import('../service/recibidos/import.js'), this.accountId()]);
    // The embedded emulator (env local) starts while the first files are read and checked.
    const hacienda = this.run.startHacienda();
    hacienda.catch(() => undefined);
    this.importer ??= new RecibidosImporter(this.svc, id, () => hacienda);
    const out = await mapped(() => this.importer!.importMany(files));
    // Webhook events of the import are delivered by this command's worker.
    if (await this.hasWebhook(id)) await this.run.keepWorking();
    return out;
  }

  async list(q: RecibidosQuery): Promise<RecibidoSummary[]> {
    const [{ listRecibidos }, id] = await Promise.all([import('../service/recibidos/queries.js'), this.accountId()]);
    return mapped(() => listRecibidos(this.svc, id, q));
  }

  async show(clave: string): Promise<RecibidoDetail | null> {
    const [{ getRecibido }, id] = await Promise.all([import('../service/recibidos/queries.js'), this.accountId()]);
    return mapped(() => getRecibido(this.svc, id, clave));
  }

  async decide(clave: string, d: DecideOptions, opts: { waitMs?: number } = {}): Promise<{ result: DecisionResult; detail: RecibidoDetail | null }> {
    const [{ decideRecibido }, id] = await Promise.all([import('../service/recibidos/decide.js'), this.accountId(), this.run.startHacienda()]);
    const result = await mapped(() => decideRecibido(this.svc, id, clave, d));
    await this.run.untilSent(result.documentId, 30_000);
    const row = await this.svc.store.db.selectFrom('documents').select(['id', 'state']).where('id', '=', result.documentId).executeTakeFirst();
    if (row && (opts.waitMs ?? 0) > 0) await this.run.waitForVerdict({ id: Number(row.id), state: row.state }, Date.now() + opts.waitMs!);
    return { result, detail: await this.show(clave) };
  }

  async summary(mes: string, emisor: string): Promise<IssuerMonthlySummary> {
    const [{ issuerSummaries }, id] = await Promise.all([import('../service/recibidos/queries.js'), this.accountId()]);
    return (await mapped(() => issuerSummaries(this.svc, id, mes, { emisor })))[0]!;
  }

  async summaries(mes: string): Promise<IssuerMonthlySummary[]> {
    const [{ issuerSummaries }, id] = await Promise.all([import('../service/recibidos/queries.js'), this.accountId()]);
    return mapped(() => issuerSummaries(this.svc, id, mes));
  }

  async file(clave: string, type: RecibidoFile): Promise<Buffer | null> {
    const [{ recibidoFile }, id] = await Promise.all([import('../service/recibidos/queries.js'), this.accountId()]);
    return mapped(() => recibidoFile(this.svc, id, clave, type));
  }

  async supplierInvoices(req: SupplierIssueRequest): Promise<SupplierIssued[]> {
    await this.run.startHacienda();
    if (this.svc.hacienda.environment !== 'local') throw new BackendError('invalid', "test suppliers exist only in an emulator: this profile's Hacienda is the real one (env local has the embedded emulator; fecr hacienda suppliers issue --url URL reaches a running fecr hacienda serve)");
    const { issueSupplierDocuments, SupplierIssueError } = await import('./emulator-suppliers.js');
    try {
      return await issueSupplierDocuments(this.svc.hacienda.endpoints.queryBaseUrl, req);
    } catch (e) {
      if (e instanceof SupplierIssueError) throw new BackendError('invalid', e.message, e.issues.map((x) => {
        const at = x.indexOf(': ');
        return at > 0 ? { path: x.slice(0, at), message: x.slice(at + 2) } : { path: 'suppliers', message: x };
      }));
      throw e;
    }
  }

  async close(): Promise<void> {
    await this.importer?.close();
    this.importer = undefined;
  }

  private async hasWebhook(accountId: number): Promise<boolean> {
    const a = await this.svc.store.db.selectFrom('accounts').select('webhook_url').where('id', '=', accountId).executeTakeFirst();
    return Boolean(a?.webhook_url);
  }
}
