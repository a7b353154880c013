/**
 * Emulator state: receptions, consecutivo claims, taxpayers learnt at run time, users seen by the IdP,
 * revoked IdP sessions and small metadata (the emulator's key). In memory by default; see sqlite-store.ts
 * for the persistent variant. All methods are synchronous (better-sqlite3 is too).
 */

export type EmulatorEnvironment = 'production' | 'sandbox';
export type EstadoRecepcion = 'recibido' | 'procesando' | 'aceptado' | 'rechazado' | 'error';

export interface IdRef {
  tipoIdentificacion: string;
  numeroIdentificacion: string;
}

/**
 * One line of DetalleMensaje's list. Hacienda lists warnings (`aviso`: the document stands, e.g. -37, -407) beside
 * errors, and some failures (the signature's) as a plain sentence without a code (`sinCodigo`).
 */
export interface ValidationErrorItem {
  codigo: number;
  mensaje: string;
  fila?: number;
  columna?: number;
  aviso?: boolean;
  sinCodigo?: boolean;
}

export interface ReceptionRecord {
  environment: EmulatorEnvironment;
  /** clave, or clave-consecutivoReceptor for a MensajeReceptor. */
  key: string;
  clave: string;
  fecha: string;
  emisor: IdRef;
  receptor?: IdRef;
  callbackUrl?: string;
  consecutivoReceptor?: string;
  /** IdP username that posted it. */
  username: string;
  xml: Buffer;
  estado: EstadoRecepcion;
  respuestaXml?: Buffer;
  receivedAt: number;
  updatedAt: number;
  /** POSTs of this key that were accepted (202): 1 by construction. */
  acceptedPosts: number;
  /** POSTs of this key refused as "ya fue recibido". */
  duplicatePosts: number;
  nombreEmisor?: string;
  nombreReceptor?: string;
  /** Errors the validation found (empty when accepted). */
  errors?: ValidationErrorItem[];
  /** Documents this one references (InformacionReferencia), for /comprobantes notasCredito/notasDebito. */
  referencias?: { tipoDoc: string; numero: string; codigo?: string }[];
  /** CondicionVenta of a comprobante, for the references of a later recibo de pago (kinds.ts). */
  condicionVenta?: string;
  /** Tipo de comprobante (01 FE, 03 NC, ...), when known. */
  tipoComprobante?: string;
  callback?: { attempts: number; delivered: boolean; lastStatus?: number; lastError?: string };
}

export interface EmulatorStore {
  getReception(env: EmulatorEnvironment, key: string): ReceptionRecord | undefined;
  /** Inserts unless the key exists; returns false when it did (atomic). */
  insertReception(rec: ReceptionRecord): boolean;
  updateReception(env: EmulatorEnvironment, key: string, patch: Partial<ReceptionRecord>): ReceptionRecord | undefined;
  incrementDuplicates(env: EmulatorEnvironment, key: string): void;
  listReceptions(filter?: { environment?: EmulatorEnvironment; username?: string }): ReceptionRecord[];
  countReceptions(): number;
  /** Receptions not finished (recibido/procesando), to resume after a restart. */
  pendingReceptions(): ReceptionRecord[];
  /**
   * Claims (issuer, consecutivo) for `key`; returns the key that owns it (this one when newly claimed or
   * already ours).
   */
  claimConsecutivo(env: EmulatorEnvironment, issuer: string, consecutivo: string, key: string): string;
  getLearntTaxpayer(id: string): unknown;
  putLearntTaxpayer(id: string, value: unknown): void;
  learntTaxpayers(): [string, unknown][];
  rememberUser(username: string, at: number): void;
  users(): { username: string; firstSeen: number; lastSeen: number; logins: number }[];
  revokeSession(sid: string, until: number): void;
  isSessionRevoked(sid: string): boolean;
  getMeta(key: string): string | undefined;
  setMeta(key: string, value: string): void;
  close(): void;
}

function clone(r: ReceptionRecord): ReceptionRecord {
  return { ...r, ...(r.errors ? { errors: r.errors.map((e) => ({ ...e })) } : {}) };
}

export class MemoryStore implements EmulatorStore {
  private readonly receptions = new Map<string, ReceptionRecord>();
  private readonly consecutivos = new Map<string, string>();
  private readonly taxpayers = new Map<string, unknown>();
  private readonly userMap = new Map<string, { username: string; firstSeen: number; lastSeen: number; logins: number }>();
  private readonly revoked = new Map<string, number>();
  private readonly meta = new Map<string, string>();

  private k(env: string, key: string): string {
    return `${env}\u0000${key}`;
  }

  getReception(env: EmulatorEnvironment, key: string): ReceptionRecord | undefined {
    const r = this.receptions.get(this.k(env, key));
    return r ? clone(r) : undefined;
  }

  insertReception(rec: ReceptionRecord): boolean {
    const k = this.k(rec.environment, rec.key);
    if (this.receptions.has(k)) return false;
    this.receptions.set(k, clone(rec));
    return true;
  }

  updateReception(env: EmulatorEnvironment, key: string, patch: Partial<ReceptionRecord>): ReceptionRecord | undefined {
    const k = this.k(env, key);
    const r = this.receptions.get(k);
    if (!r) return undefined;
    const next = { ...r, ...patch };
    this.receptions.set(k, next);
    return clone(next);
  }

  incrementDuplicates(env: EmulatorEnvironment, key: string): void {
    const r = this.receptions.get(this.k(env, key));
    if (r) r.duplicatePosts++;
  }

  listReceptions(filter: { environment?: EmulatorEnvironment; username?: string } = {}): ReceptionRecord[] {
    const out: ReceptionRecord[] = [];
    for (const r of this.receptions.values()) {
      if (filter.environment && r.environment !== filter.environment) continue;
      if (filter.username && r.username !== filter.username) continue;
      out.push(clone(r));
    }
    return out;
  }

  countReceptions(): number {
    return this.receptions.size;
  }

  pendingReceptions(): ReceptionRecord[] {
    return [...this.receptions.values()].filter((r) => r.estado === 'recibido' || r.estado === 'procesando').map(clone);
  }

  claimConsecutivo(env: EmulatorEnvironment, issuer: string, consecutivo: string, key: string): string {
    const k = `${env}\u0000${issuer}\u0000${consecutivo}`;
    const owner = this.consecutivos.get(k);
    if (owner !== undefined) return owner;
    this.consecutivos.set(k, key);
    return key;
  }

  getLearntTaxpayer(id: string): unknown {
    return this.taxpayers.get(id);
  }
  putLearntTaxpayer(id: string, value: unknown): void {
    this.taxpayers.set(id, value);
  }
  learntTaxpayers(): [string, unknown][] {
    return [...this.taxpayers.entries()];
  }

  rememberUser(username: string, at: number): void {
    const u = this.userMap.get(username);
    if (u) {
      u.lastSeen = at;
      u.logins++;
    } else this.userMap.set(username, { username, firstSeen: at, lastSeen: at, logins: 1 });
  }
  users(): { username: string; firstSeen: number; lastSeen: number; logins: number }[] {
    return [...this.userMap.values()].map((u) => ({ ...u }));
  }

  revokeSession(sid: string, until: number): void {
    this.revoked.set(sid, until);
  }
  isSessionRevoked(sid: string): boolean {
    return this.revoked.has(sid);
  }

  getMeta(key: string): string | undefined {
    return this.meta.get(key);
  }
  setMeta(key: string, value: string): void {
    this.meta.set(key, value);
  }

  close(): void {}
}
