/**
 * The Backend of local mode: the service's use cases run in this process on the profile's data dir
 * (embedded SQLite), with a local account named `local`. Nothing runs in the background between
 * commands, so the CLI itself is the worker here:
 *
 *  - `submit` stores the document and runs the worker until its send job is done (Hacienda took the POST),
 *    so a plain `fecr send` really sends;
 *  - `waitForVerdict` runs the worker until Hacienda decides or the timeout;
 *  - `status` of an undecided document runs the worker briefly (one status query) so it shows Hacienda's
 *    latest answer, as a hosted instance would.
 *
 * In env local the Hacienda emulator runs in this process too, started lazily by the first method that
 * reaches Hacienda (submit, waitForVerdict, a refresh, lookups), its state in `<dataDir>/emulator.db`; a
 * document it received before the previous command ended gets its verdict as soon as it starts again.
 *
 * Heavy modules (the use cases, the worker, the emulator) are imported on first use.
 */
import path from 'node:path';
import type { ClientContext as Ctx } from './context.js';
import type { HaciendaEndpoints } from '../hacienda/index.js';
import type { ServiceContext } from '../service/context.js';
import type { OpenedService } from '../service/runtime.js';
import type { Worker, WorkerOptions } from '../service/delivery/worker.js';
import type { DocumentRow, DocumentState } from '../store/schema.js';
import {
  BackendError,
  type Backend,
  type CabysEntry,
  type DocumentEstado,
  type DocumentQuery,
  type DocumentStatus,
  type ExoneracionSummary,
  type FileType,
  type IssuerDetails,
  type IssuerSummary,
  type TaxpayerSummary,
} from './backend.js';
import { documentStatusFromRow } from './document-status.js';
import { DocumentWatch } from './document-watch.js';
import { isClave } from '../core/clave.js';
import { DOCUMENT_STATES, FINAL_STATES } from '../core/lifecycle.js';
import { parseSince } from '../core/dates.js';

export interface LocalProfile {
  /** Data dir (default FECR_DATA_DIR, else the platform's data dir). */
  dataDir?: string;
  /** Which Hacienda: the embedded emulator (default), sandbox or production. */
  env?: 'local' | 'sandbox' | 'production';
  /** Overrides of the Hacienda URLs (sandbox/production). */
  endpoints?: Partial<HaciendaEndpoints>;
  /** The account of the data dir the verbs act as (default `local`, created on first use). */
  account?: string;
  /** Env local: the emulator's processing delay, ms (default 50). */
  emulatorDelayMs?: number;
}

/** How the caller will use a local backend. */
export interface LocalBackendOptions {
  /**
   * Many documents (a batch): env local runs the emulator on a worker thread of its own, beside the service's
   * event loop (more throughput; the thread costs a few hundred ms to start, so one-document commands keep the
   * emulator on their own thread).
   */
  bulk?: boolean;
}

/** The embedded emulator as the local backend uses it: in this thread or on a worker thread. */
interface EmbeddedEmulator {
  url: string;
  /** Resolves when every document received so far has its verdict. */
  whenIdle(): Promise<void>;
  /** True when every document received so far has its verdict (asked now: it does not wait). */
  isIdle(): Promise<boolean>;
  /** In-process only: the last error that kept a verdict from being written (a full disk, say). */
  fault?(): Error | undefined;
  close(): Promise<void>;
}

/** The default account of local mode (created on first use with a random password nobody needs). */
export const LOCAL_ACCOUNT = 'local';

const FINAL: readonly DocumentEstado[] = FINAL_STATES;
const STATES: readonly string[] = DOCUMENT_STATES;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/** True when `p` settles within `ms`; the timer is cleared either way (no stray timer keeps the process alive). */
function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), Math.max(0, ms))));
  return Promise.race([p.then(() => true), timeout]).finally(() => clearTimeout(timer));
}

export async function openLocalBackend(ctx: Ctx, profile: LocalProfile = {}, opts: LocalBackendOptions = {}): Promise<Backend> {
  const [{ openService, resolveDataDir, REDACT }, { default: pino }] = await Promise.all([import('../service/runtime.js'), import('pino')]);
  const dataDir = profile.dataDir ? path.resolve(ctx.io.cwd, profile.dataDir) : resolveDataDir(ctx.io.env);
  const level = ctx.io.env.FECR_LOG_LEVEL ?? (ctx.debug ? 'warn' : 'silent');
  let opened: OpenedService;
  try {
    opened = await openService({
      dataDir,
      env: ctx.io.env,
      environment: profile.env ?? 'local',
      ...(profile.endpoints ? { endpoints: profile.endpoints } : {}),
      startLocalEmulator: false,
      logger: pino({ level, redact: REDACT }, ctx.io.stderr),
      warn: (m) => ctx.io.stderr.write(`warning: ${m}\n`),
      now: () => ctx.now().getTime(),
    });
  } catch (e) {
    const { asStoreFault } = await import('../store/faults.js');
    const fault = asStoreFault(e, dataDir);
    if (fault) throw new BackendError('unavailable', fault.message);
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && /^(E[A-Z]+|SQLITE_\w+)$/.test(code)) throw new BackendError('unavailable', `data dir ${dataDir}: cannot open (${code})`);
    throw e;
  }
  return new LocalBackend(ctx, opened, dataDir, profile, opts);
}

class LocalBackend implements Backend {
  readonly mode = 'local' as const;
  private readonly svc: ServiceContext;
  private account: Promise<number> | undefined;
  private hacienda: Promise<void> | undefined;
  private emulator: EmbeddedEmulator | undefined;
  private worker: Worker | undefined;
  private closed = false;

  constructor(
    private readonly ctx: Ctx,
    private readonly opened: OpenedService,
    private readonly dataDir: string,
    private readonly profile: LocalProfile,
    private readonly opts: LocalBackendOptions = {},
  ) {
    this.svc = opened.ctx;
  }

  // --- issuers -------------------------------------------------------------------------------------

  async registerIssuer(record: unknown): Promise<void> {
    const [{ registerIssuer }, id] = await Promise.all([import('../service/issuers.js'), this.accountId()]);
    await mapped(() => registerIssuer(this.svc, id, record));
  }

  async updateIssuer(record: unknown): Promise<void> {
    const [{ updateIssuer }, id] = await Promise.all([import('../service/issuers.js'), this.accountId()]);
    await mapped(() => updateIssuer(this.svc, id, record));
  }

  async getIssuer(identificacion: string): Promise<IssuerSummary | null> {
    const [{ getIssuerPublic }, id] = await Promise.all([import('../service/issuers.js'), this.accountId()]);
    return mapped(() => getIssuerPublic(this.svc, id, identificacion));
  }

  async listIssuers(identificacion?: string): Promise<IssuerDetails[]> {
    const [{ listIssuerDetails }, id] = await Promise.all([import('../service/issuers.js'), this.accountId()]);
    return mapped(() => listIssuerDetails(this.svc, id, identificacion));
  }

  // --- documents -----------------------------------------------------------------------------------

  async submit(body: unknown): Promise<{ clave: string }> {
    const [{ submitDocument }, id] = await Promise.all([import('../service/documents.js'), this.accountId()]);
    const r = await mapped(() => submitDocument(this.svc, id, body));
    const doc = await this.stateOf(r.clave);
    if (doc && doc.state === 'pendiente') await this.untilSent(doc.id, 30_000);
    return { clave: r.clave };
  }

  async status(clave: string): Promise<DocumentStatus | null> {
    let doc = await this.row(clave);
    if (!doc) return null;
    if (!FINAL.includes(doc.state)) {
      await this.refresh(doc, 3_000);
      doc = (await this.row(clave)) ?? doc;
    }
    return toStatus(doc);
  }

  async waitForVerdict(clave: string, opts: { timeoutMs: number; onProgress?: (s: DocumentStatus) => void }): Promise<DocumentStatus> {
    const deadline = Date.now() + Math.max(0, opts.timeoutMs);
    // The id and state only (no XML) while waiting; the whole row when there is something to show.
    const first = await this.stateOf(clave);
    if (!first) throw new BackendError('not_found', `no document with clave ${clave}`);
    if (opts.onProgress || FINAL.includes(first.state)) {
      const doc = await this.row(clave);
      if (doc) opts.onProgress?.(toStatus(doc));
      if (doc && FINAL.includes(doc.state)) return toStatus(doc);
    }
    await this.startWorker();
    await this.nudge(clave);
    let nudged = Date.now();
    let state: DocumentState = first.state;
    const watch = this.documentWatch();
    // How long to watch the row before asking the emulator again whether it has decided. In-process, asking is
    // a counter read: ask often, so one document's verdict is fetched within ~25 ms of the decision. On its own
    // thread (a batch, hundreds waiting) each question is a message: ask less often.
    const window = this.emulator && !this.opts.bulk ? 25 : 200;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      await this.throwStoreFault();
      // One shared query per tick watches every waiting document (a batch waits for hundreds at once).
      const next = await watch.changeFrom(first.id, state, Math.min(left, window));
      if (next !== undefined) {
        state = next;
        if (FINAL.includes(state)) break;
        if (opts.onProgress) {
          const doc = await this.row(clave);
          if (doc) opts.onProgress(toStatus(doc));
        }
        continue;
      }
      if (this.emulator && state !== 'pendiente' && Date.now() - nudged >= 100 && (await this.emulator.isIdle())) {
        // The emulator is in this process: once it has decided, query the status now instead of at the
        // worker's next scheduled poll (what Hacienda's callback does for a hosted service).
        await this.nudge(clave);
        nudged = Date.now();
      }
    }
    const doc = await this.row(clave);
    if (!doc) throw new BackendError('not_found', `no document with clave ${clave}`);
    if (opts.onProgress && (doc.state !== first.state || FINAL.includes(doc.state))) opts.onProgress(toStatus(doc));
    return toStatus(doc);
  }

  async file(clave: string, type: FileType): Promise<Buffer | null> {
    const [{ getFile }, id] = await Promise.all([import('../service/files.js'), this.accountId()]);
    const f = await mapped(() => getFile(this.svc, id, clave, type));
    return f ? Buffer.from(f.encodedFile, 'base64') : null;
  }

  async listDocuments(query: DocumentQuery): Promise<DocumentStatus[]> {
    if (query.estado !== undefined && !STATES.includes(query.estado)) throw new BackendError('invalid', `unknown state ${query.estado}`, [{ path: 'estado', message: `must be one of ${STATES.join(', ')}` }]);
    let since: number | undefined;
    if (query.since !== undefined) {
      since = parseSince(query.since) ?? undefined;
      if (since === undefined) throw new BackendError('invalid', `not a date: ${query.since}`, [{ path: 'since', message: 'must be an ISO 8601 date or date-time' }]);
    }
    const [{ listDocuments }, id] = await Promise.all([import('../service/documents.js'), this.accountId()]);
    const rows = await mapped(() =>
      listDocuments(this.svc, id, {
        ...(query.estado !== undefined ? { state: query.estado } : {}),
        ...(since !== undefined ? { since } : {}),
        ...(query.limit !== undefined ? { limit: query.limit } : {}),
      }),
    );
    return rows.map(toStatus);
  }

  // --- lookups -------------------------------------------------------------------------------------

  async cabys(text: string, opts: { impuesto?: boolean } = {}): Promise<CabysEntry[]> {
    const [{ searchCabys }] = await Promise.all([import('../service/lookups.js'), this.startHacienda()]);
    return mapped(() => searchCabys(this.svc, text, opts));
  }

  async taxpayer(identificacion: string, opts: { actividades?: boolean; detalle?: boolean } = {}): Promise<TaxpayerSummary | null> {
    const [{ lookupTaxpayer }] = await Promise.all([import('../service/lookups.js'), this.startHacienda()]);
    return mapped(() => lookupTaxpayer(this.svc, identificacion, opts));
  }

  async exoneracion(numero: string): Promise<ExoneracionSummary | null> {
    const [{ lookupExoneracion }] = await Promise.all([import('../service/lookups.js'), this.startHacienda()]);
    return mapped(() => lookupExoneracion(this.svc, numero));
  }

  // --- webhook -------------------------------------------------------------------------------------

  async webhookUrl(): Promise<string | null> {
    const [{ webhookUrlOf }, id] = await Promise.all([import('../service/accounts.js'), this.accountId()]);
    return webhookUrlOf(this.svc, id);
  }

  async setWebhookUrl(url: string | null): Promise<{ secret: string | null }> {
    const [{ pointWebhook, AccountError }, id] = await Promise.all([import('../service/accounts.js'), this.accountId()]);
    try {
      const r = await pointWebhook(this.svc, id, url);
      return { secret: r.secret };
    } catch (e) {
      if (e instanceof AccountError) throw new BackendError('invalid', e.message, [{ path: 'url', message: e.message }]);
      throw e;
    }
  }

  async keepWorking(): Promise<void> {
    (await this.startWorker()).wake();
  }

  // --- lifecycle -----------------------------------------------------------------------------------

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Jobs in flight finish; queued ones stay in the data dir for the next command (or `fecr serve`).
    await this.worker?.stop();
    this.watch?.close();
    if (this.hacienda) {
      const { closeLookups } = await import('../service/lookups.js');
      await closeLookups(this.svc);
    }
    await this.emulator?.close();
    await this.opened.close();
  }

  // --- internals -----------------------------------------------------------------------------------

  /** The id of the profile's account; `local` is created on first use. */
  private accountId(): Promise<number> {
    return (this.account ??= (async () => {
      const { findAccount, createAccount, AccountError } = await import('../service/accounts.js');
      const base = this.profile.account ?? LOCAL_ACCOUNT;
      const found = await findAccount(this.svc, base);
      if (found) return found.id;
      if (base !== LOCAL_ACCOUNT) throw new BackendError('not_found', `no account ${base} in ${this.dataDir} (create it with fecr accounts create ${base})`);
      try {
        // Nobody logs in as `local`: the password only satisfies the table; it is never shown or kept.
        const password = Buffer.from(this.ctx.randomBytes(32)).toString('base64url');
        return (await createAccount(this.svc, { base, password })).account.id;
      } catch (e) {
        if (e instanceof AccountError && e.code === 'account_exists') {
          const again = await findAccount(this.svc, base);
          if (again) return again.id;
        }
        throw e;
      }
    })());
  }

  /** Env local: starts the embedded emulator and points the service at it (once). */
  private startHacienda(): Promise<void> {
    return (this.hacienda ??= (async () => {
      if (this.svc.hacienda.environment !== 'local') return;
      const { resolveEndpoints } = await import('../hacienda/index.js');
      const options = { dataFile: path.join(this.dataDir, 'emulator.db'), processingDelayMs: this.profile.emulatorDelayMs ?? 50 };
      try {
        await this.startEmulator(options);
      } catch (e) {
        // The emulator's database lives in the same data dir: a full disk is said as such.
        throw (await import('../store/faults.js')).asStoreFault(e, this.dataDir) ?? e;
      }
      this.svc.hacienda = { environment: 'local', endpoints: resolveEndpoints('local', { baseUrl: this.emulator!.url }) };
    })());
  }

  private async startEmulator(options: { dataFile: string; processingDelayMs: number }): Promise<void> {
    if (this.opts.bulk) {
      // On a thread of its own: the emulator's work (HTTP, state, the analysis of every document) runs beside
      // this event loop, which has the service's work to do (a batch keeps both busy).
      const { startEmulatorThread } = await import('../emulator/thread.js');
      const t = await startEmulatorThread(options);
      this.emulator = { url: t.url, whenIdle: () => t.whenIdle(), isIdle: async () => (await t.pending()) === 0, close: () => t.close() };
    } else {
      const { startEmulator } = await import('../emulator/index.js');
      const e = await startEmulator(options);
      this.emulator = { url: e.url, whenIdle: () => e.state.whenIdle(), isIdle: async () => e.state.pending === 0, fault: () => e.state.processingFault, close: () => e.close() };
    }
  }

  private workerStarting?: Promise<Worker>;

  /** One worker per backend, even when several calls start it at once. */
  private startWorker(): Promise<Worker> {
    return (this.workerStarting ??= this.createWorker());
  }

  private async createWorker(): Promise<Worker> {
    await this.startHacienda();
    const { startWorker } = await import('../service/delivery/worker.js');
    const local = this.svc.hacienda.environment === 'local';
    const opts: WorkerOptions = {
      // A person is waiting: poll sooner and never more than a few seconds apart.
      firstPollDelayMs: local ? 100 : 500,
      pollMaxIntervalMs: local ? 1_000 : 5_000,
      pollIntervalMs: 20,
      // Short leases: after a Ctrl-C or kill, the next command takes the jobs over within seconds.
      leaseMs: 6_000,
    };
    this.worker = startWorker(this.svc, opts);
    return this.worker;
  }

  /** Makes the document's pending send/poll jobs due now and wakes the worker. */
  private async nudge(clave: string): Promise<void> {
    const { acceptCallback } = await import('../service/delivery/worker.js');
    await acceptCallback(this.svc, { clave });
    this.worker?.wake();
  }

  /** Runs the worker until the document left `pendiente`, or its send attempt failed (retried later), or the timeout. */
  private async untilSent(documentId: number, timeoutMs: number): Promise<void> {
    const worker = await this.startWorker();
    worker.wake();
    const deadline = Date.now() + timeoutMs;
    const watch = this.documentWatch();
    while (Date.now() < deadline) {
      // Left pendiente (sent, or refused by Hacienda's validation)?
      if ((await watch.changeFrom(documentId, 'pendiente', Math.min(deadline - Date.now(), 100))) !== undefined) return;
      // Still pendiente after a while: a send attempt that failed is retried later by the queue; don't hold the caller.
      const send = await this.svc.store.db
        .selectFrom('jobs')
        .select(['attempts', 'lease_owner', 'done_at'])
        .where('document_id', '=', documentId)
        .where('type', '=', 'send')
        .executeTakeFirst();
      if (!send || send.done_at !== null || (send.attempts > 0 && send.lease_owner === null)) return;
    }
  }

  private watch?: DocumentWatch;

  private documentWatch(): DocumentWatch {
    return (this.watch ??= new DocumentWatch(this.svc.store.db));
  }

  /**
   * One round of work for an undecided document: the emulator finishes what it received, the document's
   * jobs become due, and the worker runs each of them once (or the timeout).
   */
  private async refresh(doc: DocumentRow, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const jobs = () =>
      this.svc.store.db
        .selectFrom('jobs')
        .select(['id', 'attempts', 'lease_owner', 'done_at'])
        .where('document_id', '=', doc.id)
        .where('type', 'in', ['send', 'poll'])
        .where('done_at', 'is', null)
        .execute();
    const before = await jobs();
    if (before.length === 0) return;
    await this.startWorker();
    if (this.emulator) await within(this.emulator.whenIdle(), deadline - Date.now());
    await this.nudge(doc.clave);
    const attempts = new Map(before.map((j) => [j.id, j.attempts]));
    while (Date.now() < deadline) {
      await sleep(15);
      const now = await jobs();
      const progressed = [...attempts.keys()].every((id) => {
        const j = now.find((x) => x.id === id);
        return !j || (j.attempts > attempts.get(id)! && j.lease_owner === null);
      });
      if (progressed) return;
    }
  }

  /**
   * Waiting makes no sense while the data dir cannot take a verdict: when the worker or the embedded emulator
   * last failed on a full disk (or a lost store), that is the answer. Nothing was lost: the document and its
   * jobs are stored, and the next command picks them up.
   */
  private async throwStoreFault(): Promise<void> {
    const seen = this.worker?.lastStoreFault ?? this.emulator?.fault?.();
    if (!seen) return;
    const fault = (await import('../store/faults.js')).asStoreFault(seen, this.dataDir);
    if (fault) throw fault;
  }

  /** The document's id and state (no XML). */
  private async stateOf(clave: string): Promise<{ id: number; state: DocumentState } | null> {
    if (!isClave(clave)) return null;
    const id = await this.accountId();
    const r = await this.svc.store.db.selectFrom('documents').select(['id', 'state']).where('account_id', '=', id).where('clave', '=', clave).executeTakeFirst();
    return r ?? null;
  }

  private async row(clave: string): Promise<DocumentRow | null> {
    if (!isClave(clave)) return null;
    const [{ getDocument }, id] = await Promise.all([import('../service/documents.js'), this.accountId()]);
    return getDocument(this.svc, id, clave);
  }
}

/** Runs a use case; its ServiceError becomes a BackendError (anything else is an internal error). */
async function mapped<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    const { ServiceError } = await import('../service/service-error.js');
    if (e instanceof ServiceError) {
      const code = e.code === 'not_found' ? 'not_found' : e.code === 'service_unavailable' ? 'unavailable' : e.code === 'unauthorized' ? 'auth' : 'invalid';
      throw new BackendError(code, e.message, e.details ?? []);
    }
    throw e;
  }
}

const toStatus = (row: Parameters<typeof documentStatusFromRow>[0]): DocumentStatus => documentStatusFromRow(row);

