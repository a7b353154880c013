/** The reports' two ends (client/reports.ts): the use case in this process, or the hosted service's route. */
import type { ServiceContext } from '../service/context.js';
import type { IvaReport } from '../service/report-iva.js';
import { BackendError } from './backend.js';
import type { ReportsApi } from './reports.js';

export class LocalReports implements ReportsApi {
  constructor(
    private readonly svc: ServiceContext,
    private readonly accountId: () => Promise<number>,
  ) {}

  async iva(mes: string, emisor?: string, opts: { plazoDias?: number } = {}): Promise<IvaReport> {
    const [{ ivaReport }, { ServiceError }, id] = await Promise.all([import('../service/report-iva.js'), import('../service/service-error.js'), this.accountId()]);
    try {
      return await ivaReport(this.svc, id, mes, emisor, opts);
    } catch (e) {
      if (e instanceof ServiceError) throw new BackendError(e.code === 'not_found' ? 'not_found' : 'invalid', e.message, e.details ?? []);
      throw e;
    }
  }
}

type Call = <T>(path: string, body: unknown) => Promise<T>;

export class RemoteReports implements ReportsApi {
  constructor(private readonly call: Call) {}

  async iva(mes: string, emisor?: string, opts: { plazoDias?: number } = {}): Promise<IvaReport> {
    return (await this.call<{ data: IvaReport }>('/api/reportes/iva', { mes, ...(emisor !== undefined ? { emisor } : {}), ...(opts.plazoDias !== undefined ? { plazoDias: opts.plazoDias } : {}) })).data;
  }
}
