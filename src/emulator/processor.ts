/**
 * Asynchronous processing of received documents, like Hacienda: recibido → procesando → aceptado |
 * rechazado (or error), after a configurable delay. Runs the injected validator, adds the checks that need
 * the emulator's state (consecutivo reuse per issuer, forced rejections), answers with a signed
 * MensajeHacienda, learns first-time issuers, and fires the callback.
 */
import { parseClave } from '../core/clave.js';
import { referenceErrors } from './kinds.js';
import { deliverCallback, type CallbackOptions } from './callback.js';
import type { FaultConfig } from './faults.js';
import { forcedItems } from './reject-rules.js';
import { answerEnvironment, type MensajeHaciendaSigner } from './mensaje.js';
import type { Registry, TaxpayerRecord } from './registry.js';
import { actividadItems, cabysItems, type RuleItem } from '../core/rules/registry-rules.js';
import type { EmulatorEnvironment, EmulatorStore, ReceptionRecord, ValidationErrorItem } from './store.js';
import { CODIGOS, isAccepted, TEXTOS, type ComprobanteValidator, type ValidationResult } from './validate.js';
import { crParts } from '../core/dates.js';

export interface ProcessorOptions {
  store: EmulatorStore;
  registry: Registry;
  validator: ComprobanteValidator;
  signer: MensajeHaciendaSigner;
  now: () => number;
  processingDelayMs: number;
  faults: () => FaultConfig;
  callback: CallbackOptions;
  log: (msg: string, extra?: Record<string, unknown>) => void;
  /**
   * Told each document's key once its verdict is stored (aceptado, rechazado or error), before its callback: the
   * embedded emulator's way to tell the local run at once, as Hacienda's callback tells a hosted service.
   */
  onDecided?: (key: string) => void;
}

/** The issuer and consecutivo that must be unique: (emisor, consecutivo from the clave), or (receptor, consecutivoReceptor). */
export function consecutivoClaim(rec: Pick<ReceptionRecord, 'clave' | 'emisor' | 'receptor' | 'consecutivoReceptor'>): { issuer: string; consecutivo: string } | undefined {
  if (rec.consecutivoReceptor) {
    if (!rec.receptor) return undefined;
    return { issuer: rec.receptor.numeroIdentificacion.replace(/^0+/, ''), consecutivo: rec.consecutivoReceptor };
  }
  const parts = parseClave(rec.clave);
  if (!parts) return undefined;
  return { issuer: parts.identificacion, consecutivo: parts.consecutivo };
}

/** Body of GET /recepcion/{clave} (also the callback body). */
export function statusBody(rec: ReceptionRecord): Record<string, unknown> {
  const body: Record<string, unknown> = { clave: rec.key, fecha: rec.fecha, 'ind-estado': rec.estado };
  if (rec.callbackUrl) body['callbackUrl'] = rec.callbackUrl;
  if (rec.respuestaXml) body['respuesta-xml'] = rec.respuestaXml.toString('base64');
  return body;
}

export class ReceptionProcessor {
  private closed = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();
  private pending = 0;
  /** The last error that kept a verdict from being written; cleared when a verdict is written again. */
  lastFault: Error | undefined;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly o: ProcessorOptions) {}

  /** Schedules the state transitions of a freshly received document. */
  schedule(rec: ReceptionRecord, delayMs = this.o.processingDelayMs): void {
    if (this.closed) return;
    this.pending++;
    const env = rec.environment;
    const key = rec.key;
    const half = Math.floor(delayMs / 2);
    if (half > 0) {
      this.timer(half, () => {
        try {
          const cur = this.o.store.getReception(env, key);
          if (cur?.estado === 'recibido') this.o.store.updateReception(env, key, { estado: 'procesando', updatedAt: this.o.now() });
        } catch (e) {
          // Only a label on the way (a full disk, say): processing below sets the state again.
          this.o.log('cannot mark as procesando', { key, error: e instanceof Error ? e.message : String(e) });
        }
      });
    }
    this.timer(delayMs, () => this.processTracked(env, key, 0));
  }

  /**
   * Processes one document; when that fails (its state could not be written: a full disk), the document stays
   * undecided and is tried again after a growing pause (1 s, 2 s, … 30 s) until it is decided or the processor
   * closes. A persistent emulator also resumes undecided documents when it starts.
   */
  private processTracked(env: EmulatorEnvironment, key: string, failures: number): void {
    const p = this.process(env, key)
      .then(
        () => {
          this.lastFault = undefined;
          return true;
        },
        (e: unknown) => {
          this.lastFault = e instanceof Error ? e : new Error(String(e));
          this.o.log('processing failed', { key, error: this.lastFault.message });
          return false;
        },
      )
      .then((ok) => {
        if (ok || this.closed) return this.done();
        let undecided = true;
        try {
          const cur = this.o.store.getReception(env, key);
          undecided = !cur || cur.estado === 'recibido' || cur.estado === 'procesando';
        } catch {
          // cannot read either: try again later
        }
        if (!undecided) return this.done();
        this.timer(Math.min(30_000, 1_000 * 2 ** failures), () => this.processTracked(env, key, failures + 1));
      })
      .finally(() => this.running.delete(p));
    this.running.add(p);
  }

  private timer(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (!this.closed) fn();
    }, ms);
    this.timers.add(t);
  }

  private done(): void {
    this.pending--;
    if (this.pending <= 0) {
      this.pending = 0;
      const w = this.idleWaiters;
      this.idleWaiters = [];
      for (const f of w) f();
    }
  }

  /** Resolves when every scheduled document has been processed (callbacks may still be running). */
  whenIdle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  get pendingCount(): number {
    return this.pending;
  }

  async process(env: EmulatorEnvironment, key: string): Promise<void> {
    const { store } = this.o;
    const rec = store.getReception(env, key);
    if (!rec || (rec.estado !== 'recibido' && rec.estado !== 'procesando')) return;
    if (rec.estado === 'recibido') store.updateReception(env, key, { estado: 'procesando', updatedAt: this.o.now() });

    let result: ValidationResult;
    try {
      result = await this.o.validator(rec.xml, {
        clave: rec.clave,
        fecha: rec.fecha,
        emisor: rec.emisor,
        ...(rec.receptor ? { receptor: rec.receptor } : {}),
        ...(rec.consecutivoReceptor ? { consecutivoReceptor: rec.consecutivoReceptor } : {}),
        environment: env,
        username: rec.username,
        now: new Date(this.o.now()),
      });
    } catch (e) {
      if (this.closed) return; // shutting down: the document stays pending (a persistent emulator resumes it)
      const errors = [{ codigo: CODIGOS.ERROR_INTERNO, mensaje: `Error interno al validar: ${e instanceof Error ? e.message : String(e)}`, fila: 0, columna: 0 }];
      const updated = store.updateReception(env, key, { estado: 'error', errors, updatedAt: this.o.now() });
      if (updated) this.decided(updated);
      if (updated) await this.callback(updated);
      return;
    }
    if (this.closed) return;

    const errors: ValidationErrorItem[] = [...result.errors];
    if (!result.unreadable && !rec.consecutivoReceptor) errors.push(...this.registryErrors(result));
    const claim = consecutivoClaim(rec);
    if (claim && !result.unreadable) {
      const owner = store.claimConsecutivo(env, claim.issuer, claim.consecutivo, key);
      if (owner !== key) {
        const first = store.getReception(env, owner);
        const desde = first ? formatDesde(new Date(first.receivedAt)) : '';
        errors.push({ codigo: CODIGOS.CONSECUTIVO_REPETIDO, mensaje: TEXTOS.consecutivo99(claim.consecutivo, desde, first?.clave ?? owner), fila: 0, columna: 0 });
      }
    }
    if (rec.consecutivoReceptor && !result.unreadable) {
      // The answer must be about a comprobante Hacienda has (and accepted): the referenced clave, in this environment.
      const ref = store.getReception(env, rec.clave);
      if (!ref || ref.consecutivoReceptor || ref.estado !== 'aceptado') {
        const why = !ref || ref.consecutivoReceptor ? 'no existe en nuestras bases de datos' : `no fue aceptado (estado ${ref.estado})`;
        errors.push({ codigo: CODIGOS.COMPROBANTE_DESCONOCIDO, mensaje: `El comprobante electrónico con la clave ${rec.clave} ${why}.`, fila: 0, columna: 0 });
      }
    }
    if (!result.unreadable && !rec.consecutivoReceptor) errors.push(...referenceErrors(store, env, result));
    const faults = this.o.faults();
    if (faults.rejectClaves.includes(rec.clave) || faults.rejectClaves.includes(key)) {
      errors.push({ codigo: CODIGOS.RECHAZO_FORZADO, mensaje: 'Rechazo forzado por la configuración de fallas del emulador.', fila: 0, columna: 0 });
    }
    // The fault file's rules by predicate apply to comprobantes, not to a receptor's MensajeReceptor.
    if (faults.reject.length > 0 && !rec.consecutivoReceptor) errors.push(...forcedItems(faults.reject, { clave: rec.clave, ...(result.detalles ? { detalles: result.detalles } : {}) }));
    if (!result.accepted && isAccepted(errors)) {
      errors.push({ codigo: CODIGOS.ERROR_INTERNO, mensaje: 'El validador rechazó el comprobante sin indicar el motivo.', fila: 0, columna: 0 });
    }
    // Warnings (-37, -407, -53 on the hour) are listed and leave the document accepted.
    const accepted = isAccepted(errors);
    // A document that could not be read (schema, signature) is answered about an unknown issuer (NOTES §6.3).
    const unknown = result.unreadable === true && !rec.consecutivoReceptor;
    const claveId = parseClave(rec.clave)?.identificacion;

    let respuestaXml: Buffer | undefined;
    let estado: ReceptionRecord['estado'] = accepted ? 'aceptado' : 'rechazado';
    try {
      respuestaXml = this.o.signer.build({
        clave: rec.clave,
        // A sandbox user's document is answered as the sandbox answers, on either path (mensaje.ts answerEnvironment).
        environment: answerEnvironment(env, rec.username),
        accepted,
        errors,
        ...(unknown
          ? {
              emisor: { tipoIdentificacion: rec.emisor.tipoIdentificacion, numeroIdentificacion: claveId ?? '000000000' },
              nombreEmisor: 'DESCONOCIDO',
              montoTotalImpuesto: '0',
              totalFactura: '0',
            }
          : {
              emisor: rec.consecutivoReceptor
                ? rec.emisor
                : { tipoIdentificacion: result.tipoIdentificacionEmisor ?? rec.emisor.tipoIdentificacion, numeroIdentificacion: result.numeroCedulaEmisor ?? rec.emisor.numeroIdentificacion },
              ...(result.nombreEmisor ? { nombreEmisor: this.registeredName(result) } : { nombreEmisor: this.o.registry.getTaxpayer(rec.emisor.numeroIdentificacion)?.nombre }),
              ...(rec.receptor ? { receptor: rec.receptor } : {}),
              ...(result.nombreReceptor ? { nombreReceptor: result.nombreReceptor } : {}),
              ...(result.montoTotalImpuesto !== undefined ? { montoTotalImpuesto: result.montoTotalImpuesto } : {}),
              ...(result.totalFactura !== undefined ? { totalFactura: result.totalFactura } : {}),
            }),
      });
    } catch (e) {
      estado = 'error';
      errors.push({ codigo: CODIGOS.ERROR_INTERNO, mensaje: `No se pudo generar la respuesta: ${e instanceof Error ? e.message : String(e)}`, fila: 0, columna: 0 });
    }

    const patch: Partial<ReceptionRecord> = { estado, errors, updatedAt: this.o.now() };
    if (respuestaXml) patch.respuestaXml = respuestaXml;
    if (result.nombreEmisor) patch.nombreEmisor = result.nombreEmisor;
    if (result.nombreReceptor) patch.nombreReceptor = result.nombreReceptor;
    if (result.referencias?.length) patch.referencias = result.referencias;
    if (result.tipoComprobante) patch.tipoComprobante = result.tipoComprobante;
    if (result.condicionVenta) patch.condicionVenta = result.condicionVenta;
    const updated = store.updateReception(env, key, patch);
    if (accepted && !rec.consecutivoReceptor) this.learnTaxpayer(result);
    if (updated) this.decided(updated);
    if (updated) await this.callback(updated);
  }

  /** NombreEmisor of the answer: the taxpayer's registered name, else the document's. */
  private registeredName(r: ValidationResult): string | undefined {
    return (r.numeroCedulaEmisor && this.o.registry.getTaxpayer(r.numeroCedulaEmisor)?.nombre) || r.nombreEmisor;
  }

  /**
   * The checks against Hacienda's registers, shared with `fecr validate` (core/rules/registry-rules.ts): every line's
   * CABYS code in the catalogue (-400); the issuer's activity (-408, or the warnings -9010 and -407); its location as
   * registered (-37, a warning). An issuer the registry does not know yet has no activities or location to compare.
   */
  private registryErrors(r: ValidationResult): ValidationErrorItem[] {
    const reg = this.o.registry;
    const items: RuleItem[] = [];
    if (reg.hasCabysCatalogue) items.push(...cabysItems(r.cabys ?? [], (c) => reg.hasCabys(c)));
    const taxpayer = r.numeroCedulaEmisor ? reg.getTaxpayer(r.numeroCedulaEmisor.replace(/^0+/, '')) : undefined;
    if (r.codigoActividadEmisor) items.push(...actividadItems(r.codigoActividadEmisor, taxpayer?.actividades).filter((i) => !i.soloValidacion));
    const out: ValidationErrorItem[] = items.map((i) => ({ codigo: i.codigo, mensaje: i.mensaje, fila: 0, columna: 0, ...(i.aviso ? { aviso: true } : {}) }));
    const u = r.ubicacionEmisor;
    const reg37 = taxpayer?.ubicacion;
    if (u && reg37 && (u.provincia !== reg37.provincia || u.canton !== reg37.canton || u.distrito !== reg37.distrito)) {
      out.push({ codigo: CODIGOS.UBICACION, mensaje: TEXTOS.ubicacion37, fila: 0, columna: 0, aviso: true });
    }
    return out;
  }

  /** An accepted issuer the registry does not know becomes a known taxpayer (/fe/ae). */
  private learnTaxpayer(r: ValidationResult): void {
    const id = r.numeroCedulaEmisor;
    if (!id || !r.nombreEmisor || this.o.registry.hasTaxpayer(id)) return;
    const t: TaxpayerRecord = {
      nombre: r.nombreEmisor.toUpperCase(),
      tipoIdentificacion: r.tipoIdentificacionEmisor ?? '02',
      regimen: { codigo: 1, descripcion: 'Régimen general' },
      situacion: { moroso: 'NO', omiso: 'NO', estado: 'Inscrito', administracionTributaria: '' },
      actividades: r.codigoActividadEmisor ? [{ estado: 'A', tipo: 'P', codigo: r.codigoActividadEmisor, descripcion: '' }] : [],
      ...(r.ubicacionEmisor ? { ubicacion: r.ubicacionEmisor } : {}),
    };
    this.o.registry.putTaxpayer(id, t);
    this.o.store.putLearntTaxpayer(id, t);
  }

  private decided(rec: ReceptionRecord): void {
    try {
      this.o.onDecided?.(rec.key);
    } catch {
      // A listener's fault is not the document's.
    }
  }

  private async callback(rec: ReceptionRecord): Promise<void> {
    if (!rec.callbackUrl || this.closed) return;
    const url = rec.callbackUrl;
    // Not awaited by processing: a slow receiver must not hold the document's verdict back.
    const p = deliverCallback(url, statusBody(rec), this.o.callback, (ms) => this.sleep(ms), () => this.closed).then((outcome) => {
      if (!this.closed) this.o.store.updateReception(rec.environment, rec.key, { callback: outcome });
    });
    const tracked = p.catch(() => undefined).finally(() => this.running.delete(tracked));
    this.running.add(tracked);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.timer(ms, resolve));
  }

  /** Stops timers and waits (up to `graceMs`) for validations and callbacks in progress. */
  async close(graceMs = 2_000): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    const all = Promise.allSettled([...this.running]);
    await Promise.race([all, new Promise((r) => setTimeout(r, graceMs).unref())]);
    const w = this.idleWaiters;
    this.idleWaiters = [];
    for (const f of w) f();
  }
}

/** `11-03-2026 22:07:33`: the day and time (Costa Rica) a consecutivo was first used, as Hacienda writes it in -99. */
function formatDesde(d: Date): string {
  const p = crParts(d);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(p.day)}-${two(p.month)}-${p.year} ${two(p.hour)}:${two(p.minute)}:${two(p.second)}`;
}
