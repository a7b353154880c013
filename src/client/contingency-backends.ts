/**
 * The contingency API's two ends (client/contingency.ts): the use cases (service/contingency.ts) in this process on the
 * profile's data dir, or the hosted service's routes (server/api-contingencia.ts).
 */
import type { ServiceContext } from '../service/context.js';
import type { LocalRun } from '../service/local-run.js';
import type { ContingencyApi, ContingencyOwed, ProvisionalView } from './contingency.js';
import { mapped } from './service-errors.js';

export class LocalContingency implements ContingencyApi {
  constructor(
    private readonly svc: ServiceContext,
    private readonly run: LocalRun,
    private readonly accountId: () => Promise<number>,
  ) {}

  async reachable(timeoutMs: number): Promise<{ ok: true } | { ok: false; cause: string }> {
    // Env local: the embedded emulator is started first (its URL is where the service sends).
    const [{ haciendaReachable }] = await Promise.all([import('../service/contingency.js'), this.run.startHacienda()]);
    return haciendaReachable(this.svc, timeoutMs);
  }

  async record(input: unknown): Promise<{ provisional: ProvisionalView; created: boolean }[]> {
    const [{ recordProvisionals }, id] = await Promise.all([import('../service/contingency.js'), this.accountId()]);
    return mapped(() => recordProvisionals(this.svc, id, input));
  }

  async provisional(n: number): Promise<ProvisionalView> {
    const [{ getProvisional }, id] = await Promise.all([import('../service/contingency.js'), this.accountId()]);
    return mapped(() => getProvisional(this.svc, id, n));
  }

  async markReplaced(n: number, clave: string): Promise<ProvisionalView> {
    const [{ markReplaced }, id] = await Promise.all([import('../service/contingency.js'), this.accountId()]);
    return mapped(() => markReplaced(this.svc, id, n, clave));
  }

  async owed(): Promise<ContingencyOwed> {
    const [{ contingencyOwed }, id] = await Promise.all([import('../service/contingency.js'), this.accountId()]);
    return mapped(() => contingencyOwed(this.svc, id));
  }
}

type Call = <T>(path: string, body: unknown) => Promise<T>;

/** A hosted service: its routes. No reachability check: the hosted service signs, and has no `contingencia auto`. */
export class RemoteContingency implements ContingencyApi {
  constructor(private readonly call: Call) {}

  async record(input: unknown): Promise<{ provisional: ProvisionalView; created: boolean }[]> {
    return (await this.call<{ data: { provisional: ProvisionalView; created: boolean }[] }>('/api/contingencia/registrar', { provisionales: input })).data;
  }

  async provisional(id: number): Promise<ProvisionalView> {
    return (await this.call<{ data: ProvisionalView }>('/api/contingencia/provisional', { id })).data;
  }

  async markReplaced(id: number, clave: string): Promise<ProvisionalView> {
    return (await this.call<{ data: ProvisionalView }>('/api/contingencia/reemplazo', { id, clave })).data;
  }

  async owed(): Promise<ContingencyOwed> {
    return (await this.call<{ data: ContingencyOwed }>('/api/contingencia/pendientes', {})).data;
  }
}
