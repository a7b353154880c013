/**
 * Numbering in local mode (issue 27, point 2): the issuer's series (`fecr emisor numbers`) through
 * service/numbering.ts, and the English line a CLI user gets when a number is refused. The service's errors carry
 * the figures (NumberTakenError, StartBelowUsedError); the hosted API words them in Spanish for its clients.
 */
import type { ServiceContext } from '../service/context.js';
import { BackendError, type IssuerNumbers, type NumberingApi, type StartRequest } from './backend.js';

export class LocalNumbering implements NumberingApi {
  constructor(
    private readonly svc: ServiceContext,
    private readonly accountId: () => Promise<number>,
  ) {}

  async list(identificacion: string): Promise<IssuerNumbers> {
    const [{ issuerNumbers }, id] = await Promise.all([import('../service/numbering.js'), this.accountId()]);
    return inEnglish(() => issuerNumbers(this.svc, id, identificacion));
  }

  async set(identificacion: string, starts: readonly StartRequest[]): Promise<IssuerNumbers> {
    const [{ setNumberStarts }, id] = await Promise.all([import('../service/numbering.js'), this.accountId()]);
    return inEnglish(() => setNumberStarts(this.svc, id, identificacion, starts));
  }
}

/**
 * Runs a service call; the numbering's refusals and a missing issuer become a BackendError with one English line
 * (no findings), other ServiceErrors a BackendError with the service's message and details.
 */
export async function inEnglish<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    const [{ NumberTakenError }, { StartBelowUsedError }, { ServiceError }] = await Promise.all([
      import('../service/documents.js'),
      import('../service/numbering.js'),
      import('../service/service-error.js'),
    ]);
    if (e instanceof NumberTakenError) throw new BackendError('invalid', numberTakenLine(e));
    if (e instanceof StartBelowUsedError) {
      const s = e.series;
      throw new BackendError('invalid', `${s.kind} (sucursal ${s.sucursal}, terminal ${s.terminal}) has already used number ${e.highest}: it cannot start at ${e.requested}; the lowest start is ${e.highest + 1}`);
    }
    if (e instanceof ServiceError) {
      const code = e.code === 'not_found' ? 'not_found' : e.code === 'service_unavailable' ? 'unavailable' : e.code === 'unauthorized' ? 'auth' : 'invalid';
      throw new BackendError(code, e.code === 'not_found' ? notFoundLine(e.message) : e.message, e.details ?? []);
    }
    throw e;
  }
}

/** A different body under a used number, in one line: the number, its series, the clave that holds it, the next free one. */
export function numberTakenLine(e: { numero: number; kind: string; sucursal: number; terminal: number; clave: string; next: number }): string {
  return (
    `numeroReferencia ${e.numero} of ${e.kind} (sucursal ${e.sucursal}, terminal ${e.terminal}) is already used by ${e.clave}, ` +
    `whose body differs; the next free number is ${e.next} (or leave numeroReferencia out and fecr takes it)`
  );
}

function notFoundLine(message: string): string {
  const m = /^El emisor (.+) no está registrado/.exec(message);
  return m ? `issuer ${m[1]} is not registered (fecr emisor register)` : message;
}
