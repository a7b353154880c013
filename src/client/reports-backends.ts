/** The reports' two ends (client/reports.ts): the use case in this process, or the hosted service's route. */
import type { ServiceContext } from '../service/context.js';
import type { IvaReport } from '../service/report-iva.js';
import { mapped } from './service-errors.js';
import type { ReportsApi } from './reports.js';

export class LocalReports implements ReportsApi {
  constructor(
    private readonly svc: ServiceContext,
    private readonly accountId: () => Promise<number>,
  ) {}

  async iva(mes: string, emisor: string, opts: { plazoDias?: number } = {}): Promise<IvaReport> {
    const [{ ivaReport }, id] = await Promise.all([import('../service/report-iva.js'), this.accountId()]);
    return mapped(() => ivaReport(this.svc, id, mes, emisor, opts));
  }

  async ivaEach(mes: string, opts: { plazoDias?: number } = {}): Promise<IvaReport[]> {
    const [{ ivaReports }, id] = await Promise.all([import('../service/report-iva.js'), this.accountId()]);
    return mapped(() => ivaReports(this.svc, id, mes, opts));
  }
}

type Call = <T>(path: string, body: unknown) => Promise<T>;

export class RemoteReports implements ReportsApi {
  constructor(private readonly call: Call) {}

  async iva(mes: string, emisor: string, opts: { plazoDias?: number } = {}): Promise<IvaReport> {
    return (await this.call<{ data: IvaReport }>('/api/reportes/iva', { mes, emisor, ...(opts.plazoDias !== undefined ? { plazoDias: opts.plazoDias } : {}) })).data;
  }

  /** Without `emisor` the route answers one report per issuer (issue 36). */
  async ivaEach(mes: string, opts: { plazoDias?: number } = {}): Promise<IvaReport[]> {
    return (await this.call<{ data: IvaReport[] }>('/api/reportes/iva', { mes, ...(opts.plazoDias !== undefined ? { plazoDias: opts.plazoDias } : {}) })).data;
  }
}
