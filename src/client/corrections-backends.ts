/** The two ends of client/corrections.ts: the use cases in this process, or the hosted service's routes. */
import type { ServiceContext } from '../service/context.js';
import type { DocumentLinks, PaymentRequest } from '../service/corrections.js';
import { BackendError, type SubmitOutcome } from './backend.js';
import { mapped } from './service-errors.js';
import type { CorrectionsApi } from './corrections.js';

/**
 * Local mode: the service makes the body (service/corrections.ts), and the backend's own `submit` sends it, exactly as
 * `fecr send` does (numbering, signing, the queue, the wait for it to be sent).
 */
export class LocalCorrections implements CorrectionsApi {
  constructor(
    private readonly svc: ServiceContext,
    private readonly accountId: () => Promise<number>,
    private readonly submit: (body: unknown) => Promise<SubmitOutcome>,
  ) {}

  async annul(clave: string, opts: { razon?: string } = {}): Promise<SubmitOutcome> {
    const { annulmentBodyFor } = await import('../service/corrections.js');
    return this.submit(await this.mapped(async (id) => annulmentBodyFor(this.svc, id, clave, opts)));
  }

  async replace(clave: string, body: unknown, opts: { razon?: string } = {}): Promise<SubmitOutcome> {
    const { replacementBodyFor } = await import('../service/corrections.js');
    return this.submit(await this.mapped(async (id) => replacementBodyFor(this.svc, id, clave, body, opts)));
  }

  async payment(clave: string, p: PaymentRequest): Promise<SubmitOutcome> {
    const { paymentBodyFor } = await import('../service/corrections.js');
    return this.submit(await this.mapped(async (id) => paymentBodyFor(this.svc, id, clave, p)));
  }

  async links(clave: string): Promise<DocumentLinks | null> {
    const { documentLinks } = await import('../service/corrections.js');
    return this.mapped(async (id) => documentLinks(this.svc, id, clave));
  }

  private async mapped<T>(fn: (accountId: number) => Promise<T>): Promise<T> {
    const id = await this.accountId();
    return mapped(() => fn(id));
  }
}

type Call = <T>(path: string, body: unknown, nullOn404?: boolean) => Promise<T>;

/** Remote mode: fecr's own routes (src/server/api-documentos.ts); the hosted service numbers, signs and sends. */
export class RemoteCorrections implements CorrectionsApi {
  constructor(private readonly call: Call) {}

  async annul(clave: string, opts: { razon?: string } = {}): Promise<SubmitOutcome> {
    return outcome(await this.call<Derived>('/api/documentos/anular', { clave, ...opts }));
  }

  async replace(clave: string, body: unknown, opts: { razon?: string } = {}): Promise<SubmitOutcome> {
    return outcome(await this.call<Derived>('/api/documentos/sustituir', { clave, documento: body, ...opts }));
  }

  async payment(clave: string, p: PaymentRequest): Promise<SubmitOutcome> {
    return outcome(await this.call<Derived>('/api/documentos/pago', { clave, ...p }));
  }

  async links(clave: string): Promise<DocumentLinks | null> {
    const r = await this.call<{ data: DocumentLinks } | null>('/api/documentos/referencias', { clave }, true);
    return r?.data ?? null;
  }
}

/** The answer of the routes that make a document (api/contract.ts DocumentoDerivado). */
type Derived = { data: import('../api/contract.js').DocumentoDerivado };

function outcome(r: Derived): SubmitOutcome {
  return { clave: r.data.clave, assigned: r.data.numeroReferencia };
}
