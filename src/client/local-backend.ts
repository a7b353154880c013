/**
 * The Backend of local mode: the service's use cases run in this process on the profile's data dir (embedded
 * SQLite), with a local account named `local`. A thin adapter like remote-backend.ts: each method is one service
 * call, and a ServiceError becomes a BackendError. The run of the service for this command (the CLI is the worker;
 * in env local the emulator runs here too, started lazily) is service/local-run.ts.
 *
 * Heavy modules (the use cases, the worker, the emulator) are imported on first use.
 */
import path from 'node:path';
import type { ClientContext as Ctx } from './context.js';
import type { HaciendaEndpoints } from '../hacienda/index.js';
import type { ServiceContext } from '../service/context.js';
import type { LocalRun } from '../service/local-run.js';
import type { OpenedService } from '../service/runtime.js';
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
  type IssuerUpdate,
  type MailStatus,
  type SubmitOptions,
  type SubmitOutcome,
  type TaxpayerSummary,
} from './backend.js';
import { documentStatusFromRow } from '../service/document-status.js';
import { LocalRecibidos } from './recibidos-local.js';
import { LocalContingency } from './contingency-backends.js';
import { lazyApi, mapped } from './service-errors.js';
import { inEnglish, LocalNumbering } from './numbering-local.js';
import { isClave } from '../core/clave.js';
import { DOCUMENT_STATES, FINAL_STATES, HELD_STATES } from '../core/lifecycle.js';
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
  /**
   * The receptor mails' SMTP server (without password), From and Reply-To. None: with env local (the emulator's
   * documents are tests) the outbox; else FECR_SMTP_URL, then the outbox. An account's own settings (`fecr accounts
   * mail`, password sealed) win over these.
   */
  smtpUrl?: string;
  mailFrom?: string;
  mailReplyTo?: string;
  /** CA certificates trusted for received comprobantes beside the shipped ones (service/recibidos/trust.ts). */
  recibidosTrust?: string;
  /** Mails go to the outbox whatever is configured (`fecr demo`). */
  outboxOnly?: boolean;
  /** Env local: an external emulator (`fecr hacienda serve`) at this URL, given as `endpoints`; none is started here. */
  haciendaUrl?: string;
  /** Env local: the fault file the embedded emulator starts with (docs/faults.md). */
  emulatorFaults?: string;
}

/** How the caller will use a local backend. */
export interface LocalBackendOptions {
  /** Many documents (a batch): env local runs the emulator on a thread of its own (service/local-run.ts). */
  bulk?: boolean;
  /**
   * The command submits one document (`fecr send`): when the service mails, the thread that renders the receptor's
   * mail starts loading at once, on the other core, while this one validates, signs and sends.
   */
  sending?: boolean;
  /**
   * The data dir's master key, held in memory only (`fecr test`'s throwaway profile: no key file a killed run would
   * leave behind, issue 37); FECR_MASTER_KEY, when set, still wins.
   */
  masterKey?: Buffer;
}

/** service/local-run.ts, imported with the use cases' runtime (it brings the store's queries along). */
type LocalRunModule = typeof import('../service/local-run.js');

const FINAL: readonly DocumentEstado[] = FINAL_STATES;
const HELD: readonly DocumentEstado[] = HELD_STATES;
const STATES: readonly string[] = DOCUMENT_STATES;

export async function openLocalBackend(ctx: Ctx, profile: LocalProfile = {}, opts: LocalBackendOptions = {}): Promise<Backend> {
  const mail = await localMailDefaults(ctx, profile);
  // `fecr send --wait`: the thread that will render the receptor's mail starts now, beside the loading of the service.
  const mailThread = opts.sending && !opts.bulk ? await startMailThread(ctx) : undefined;
  try {
    return await openWith(ctx, profile, opts, mail, mailThread);
  } catch (e) {
    await mailThread?.close();
    throw e;
  }
}

type MailThread = import('../service/delivery/email-render-pool.js').MailRenderThread;

/** One thread, warming up at once (its failure is said with --debug only: mails are then rendered on this thread). */
async function startMailThread(ctx: Ctx): Promise<MailThread> {
  const { MailRenderThread } = await import('../service/delivery/email-render-pool.js');
  const thread = new MailRenderThread(1, (e) => {
    if (ctx.debug) ctx.io.stderr.write(`debug: the mail thread failed (${e instanceof Error ? e.message : String(e)}); mails are rendered on the main thread\n`);
  });
  thread.warm();
  return thread;
}

async function openWith(ctx: Ctx, profile: LocalProfile, opts: LocalBackendOptions, mail: Awaited<ReturnType<typeof localMailDefaults>>, mailThread: MailThread | undefined): Promise<Backend> {
  const [{ openService, resolveDataDir, REDACT }, { default: pino }, run] = await Promise.all([import('../service/runtime.js'), import('pino'), import('../service/local-run.js')]);
  const dataDir = profile.dataDir ? path.resolve(ctx.io.cwd, profile.dataDir) : resolveDataDir(ctx.io.env);
  // A bad fault file is said before anything is sent, with its findings.
  const faults = await (await import('./emulator-faults.js')).emulatorFaultsOf(ctx.io.cwd, profile);
  const level = ctx.io.env.FECR_LOG_LEVEL ?? (ctx.debug ? 'warn' : 'silent');
  let opened: OpenedService;
  try {
    opened = await openService({
      dataDir,
      env: opts.masterKey && !ctx.io.env.FECR_MASTER_KEY ? { ...ctx.io.env, FECR_MASTER_KEY: opts.masterKey.toString('base64') } : ctx.io.env,
      environment: profile.env ?? 'local',
      ...(profile.endpoints ? { endpoints: profile.endpoints } : {}),
      startLocalEmulator: false,
      logger: pino({ level, redact: REDACT }, ctx.io.stderr),
      warn: (m) => ctx.io.stderr.write(`warning: ${m}\n`),
      now: () => ctx.now().getTime(),
      mail,
      ...(profile.recibidosTrust ? { recibidosTrust: { value: profile.recibidosTrust, setting: 'recibidosTrust' } } : {}),
    });
  } catch (e) {
    const { asStoreFault } = await import('../store/faults.js');
    const fault = asStoreFault(e, dataDir);
    if (fault) throw new BackendError('unavailable', fault.message);
    // A trust setting that cannot be used (service/recibidos/trust.ts): its own words, naming it.
    if (e instanceof Error && e.name === 'TrustSettingError') throw new BackendError('invalid', e.message);
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && /^(E[A-Z]+|SQLITE_\w+)$/.test(code)) throw new BackendError('unavailable', `data dir ${dataDir}: cannot open (${code})`);
    throw e;
  }
  return new LocalBackend(ctx, opened, dataDir, profile, run, opts, mailThread, faults);
}

class LocalBackend implements Backend {
  readonly mode = 'local' as const;
  private readonly svc: ServiceContext;
  private readonly run: LocalRun;
  private account: Promise<number> | undefined;
  private closed = false;
  private readonly bulk: boolean;

  constructor(
    private readonly ctx: Ctx,
    private readonly opened: OpenedService,
    private readonly dataDir: string,
    private readonly profile: LocalProfile,
    private readonly local: LocalRunModule,
    opts: LocalBackendOptions = {},
    mailThread?: MailThread,
    faults?: import('../emulator/faults.js').FaultFile,
  ) {
    this.svc = opened.ctx;
    this.bulk = opts.bulk ?? false;
    this.run = new local.LocalRun(this.svc, {
      dataDir,
      ...(opts.bulk !== undefined ? { bulk: opts.bulk } : {}),
      ...(profile.emulatorDelayMs !== undefined ? { emulatorDelayMs: profile.emulatorDelayMs } : {}),
      ...(mailThread ? { mailThread } : {}),
      ...(faults ? { emulatorFaults: faults } : {}),
      ...(profile.haciendaUrl && (profile.env ?? 'local') === 'local' ? { externalEmulator: true } : {}),
    });
  }

  // --- issuers -------------------------------------------------------------------------------------

  async registerIssuer(record: unknown): Promise<void> {
    const [{ registerIssuer }, id] = await Promise.all([import('../service/issuers.js'), this.accountId()]);
    await mapped(() => registerIssuer(this.svc, id, record));
  }

  async updateIssuer(record: unknown): Promise<IssuerUpdate> {
    const [{ updateIssuer }, id] = await Promise.all([import('../service/issuers.js'), this.accountId()]);
    const r = await mapped(() => updateIssuer(this.svc, id, record));
    const released = r.released ?? [];
    if (released.length === 0) return { released: 0, stillHeld: 0 };
    // Its documents held for the refused credentials: nothing runs between commands, so this one sends them.
    await this.run.untilAllSent(released, 30_000);
    const { documentStates } = await import('../store/documents.js');
    const states = await documentStates(this.svc.store.db, released);
    return { released: released.length, stillHeld: states.filter((d) => HELD.includes(d.state)).length };
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

  async submit(body: unknown, opts: SubmitOptions = {}): Promise<SubmitOutcome> {
    const [{ submitDocument }, id] = await Promise.all([import('../service/documents.js'), this.accountId()]);
    // Local mode numbers a body without numeroReferencia (service/documents.ts); a refused number is said in English.
    const assigned = !hasNumber(body);
    const r = await inEnglish(() => submitDocument(this.svc, id, body, { assignNumber: true, ...opts }));
    const doc = await this.stateOf(r.clave);
    if (doc && doc.state === 'pendiente') await this.run.untilSent(doc.id, 30_000);
    // Held (its issuer's credentials refused by Hacienda): the caller says so.
    const now = doc ? await this.stateOf(r.clave) : null;
    return {
      clave: r.clave,
      ...(now && HELD.includes(now.state) ? { estado: now.state } : {}),
      ...(r.created ? {} : { alreadySent: true }),
      // The consecutivo's last 10 digits (the clave's 32nd to 41st characters) are the number.
      ...(assigned ? { assigned: Number(r.clave.slice(31, 41)) } : {}),
    };
  }

  numbering(): LocalNumbering {
    return new LocalNumbering(this.svc, () => this.accountId());
  }

  async unsentCause(clave: string): Promise<string | null> {
    const doc = await this.stateOf(clave);
    if (!doc || doc.state !== 'pendiente') return null;
    return (await import('../store/jobs.js')).unsentCauseOf(this.svc.store.db, doc.id);
  }

  async status(clave: string): Promise<DocumentStatus | null> {
    let doc = await this.row(clave);
    if (!doc) return null;
    if (!FINAL.includes(doc.state)) {
      await this.run.refresh(doc, 3_000);
      doc = (await this.row(clave)) ?? doc;
    }
    // A mail queued and not sent yet (by a command that ended first): this command sends it.
    if (doc.state === 'aceptado') await this.run.untilMailed(doc.id, 10_000);
    return (await this.withMail([doc]))[0]!;
  }

  /** The rows as DocumentStatus, each with its latest mail to the receptor. */
  private async withMail(rows: (Parameters<typeof documentStatusFromRow>[0] & { id: number })[]): Promise<DocumentStatus[]> {
    const { mailStatusOf } = await import('../service/delivery/email.js');
    const mails = await mailStatusOf(this.svc, rows.map((r) => Number(r.id)));
    return rows.map((r) => documentStatusFromRow(r, mails.get(Number(r.id)) ?? null));
  }

  async emailDocument(clave: string, to?: string[]): Promise<MailStatus> {
    const [{ requestMail, mailById, toMailStatus }, id] = await Promise.all([import('../service/delivery/email.js'), this.accountId()]);
    // Local mode: the data dir's account is its own operator (service/delivery/email-policy.ts): whom it names, no limits.
    const r = await mapped(() => requestMail(this.svc, id, clave, { caller: 'operator', ...(to && to.length > 0 ? { to } : {}) }));
    const doc = await this.stateOf(clave);
    if (doc) await this.run.untilMailed(doc.id, 30_000);
    const row = await mailById(this.svc, r.id);
    return row ? toMailStatus(row) : r.mail;
  }

  async waitForVerdict(clave: string, opts: { timeoutMs: number; onProgress?: (s: DocumentStatus) => void }): Promise<DocumentStatus> {
    const deadline = Date.now() + Math.max(0, opts.timeoutMs);
    // The id and state only (no XML) while waiting; the whole row when there is something to show.
    const first = await this.stateOf(clave);
    if (!first) throw new BackendError('not_found', `no document with clave ${clave}`);
    if (opts.onProgress || FINAL.includes(first.state) || HELD.includes(first.state)) {
      const doc = await this.row(clave);
      if (doc) opts.onProgress?.(toStatus(doc));
      if (doc && FINAL.includes(doc.state)) return this.decided(doc);
      // Held until the issuer's credentials are updated: nothing to wait for.
      if (doc && HELD.includes(doc.state)) return (await this.withMail([doc]))[0]!;
    }
    const onProgress = opts.onProgress;
    await this.run.waitForVerdict(
      first,
      deadline,
      onProgress &&
        (async () => {
          const doc = await this.row(clave);
          if (doc) onProgress(toStatus(doc));
        }),
    );
    const doc = await this.row(clave);
    if (!doc) throw new BackendError('not_found', `no document with clave ${clave}`);
    if (opts.onProgress && (doc.state !== first.state || FINAL.includes(doc.state))) opts.onProgress(toStatus(doc));
    return this.decided(doc);
  }

  /**
   * A document as its wait ends: when aceptado, its mail to the receptor (queued by the verdict) is delivered first;
   * in bulk (a batch) the mails wait until every verdict is in (deliverQueuedMail).
   */
  private async decided(doc: DocumentRow): Promise<DocumentStatus> {
    if (doc.state === 'aceptado' && !this.bulk) await this.run.untilMailed(doc.id, 15_000);
    return (await this.withMail([doc]))[0]!;
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
        ...(query.emisor !== undefined ? { issuer: query.emisor } : {}),
      }),
    );
    return this.withMail(rows);
  }

  // --- lookups -------------------------------------------------------------------------------------
  tipoCambio = async (fecha: string, moneda = 'USD') => mapped(async () => (await Promise.all([import('../service/exchange-rate.js'), this.run.startHacienda()]))[0].tipoCambioOrError(this.svc, moneda, fecha));
  async cabys(text: string, opts: { impuesto?: boolean } = {}): Promise<CabysEntry[]> {
    const [{ searchCabys }] = await Promise.all([import('../service/lookups.js'), this.run.startHacienda()]);
    return mapped(() => searchCabys(this.svc, text, opts));
  }

  async taxpayer(identificacion: string, opts: { actividades?: boolean; detalle?: boolean } = {}): Promise<TaxpayerSummary | null> {
    const [{ lookupTaxpayer }] = await Promise.all([import('../service/lookups.js'), this.run.startHacienda()]);
    return mapped(() => lookupTaxpayer(this.svc, identificacion, opts));
  }

  async exoneracion(numero: string): Promise<ExoneracionSummary | null> {
    const [{ lookupExoneracion }] = await Promise.all([import('../service/lookups.js'), this.run.startHacienda()]);
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
    await this.run.keepWorking();
  }

  deliverQueuedMail(opts: { signal?: AbortSignal; onProgress?: (left: number) => void } = {}): Promise<number> {
    return mapped(() => this.run.untilMailsSent(opts));
  }
  // --- the buyer's side ----------------------------------------------------------------------------

  private buyer: LocalRecibidos | undefined;
  recibidos(): LocalRecibidos {
    return (this.buyer ??= new LocalRecibidos(this.svc, this.run, () => this.accountId()));
  }

  /** fecr report iva. */
  reports = () => lazyApi<import('./reports.js').ReportsApi>(async () => new (await import('./reports-backends.js')).LocalReports(this.svc, () => this.accountId()));
  /** fecr documents annul|replace|payment, and the references fecr status shows (issue 30). */
  corrections = () => lazyApi<import('./corrections.js').CorrectionsApi>(async () => new (await import('./corrections-backends.js')).LocalCorrections(this.svc, () => this.accountId(), (b) => this.submit(b)));
  contingency = (): import('./contingency.js').ContingencyApi => new LocalContingency(this.svc, this.run, () => this.accountId()); // fecr contingency
  // --- lifecycle -----------------------------------------------------------------------------------

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.buyer?.close();
    // Jobs in flight finish; queued ones stay in the data dir for the next command (or `fecr serve`).
    await this.run.close();
    await this.opened.close();
  }

  // --- internals -----------------------------------------------------------------------------------

  /** The id of the profile's account; `local` is created on first use. */
  private accountId(): Promise<number> {
    return (this.account ??= (async () => {
      const base = this.profile.account ?? this.local.LOCAL_ACCOUNT;
      const id = await this.local.localAccountId(this.svc, base, this.ctx.randomBytes);
      if (id === null) throw new BackendError('not_found', `no account ${base} in ${this.dataDir} (create it with fecr accounts create ${base})`);
      return id;
    })());
  }

  /** The document's id and state (no XML). */
  private async stateOf(clave: string): Promise<{ id: number; state: DocumentState } | null> {
    if (!isClave(clave)) return null;
    return this.local.documentStateFor(this.svc, await this.accountId(), clave);
  }

  private async row(clave: string): Promise<DocumentRow | null> {
    if (!isClave(clave)) return null;
    const [{ getDocument }, id] = await Promise.all([import('../service/documents.js'), this.accountId()]);
    return getDocument(this.svc, id, clave);
  }
}

/** Whether a body gives its numeroReferencia (else local mode takes the next free one). */
function hasNumber(body: unknown): boolean {
  return typeof body !== 'object' || body === null || Array.isArray(body) || (body as { numeroReferencia?: unknown }).numeroReferencia !== undefined;
}

const toStatus = (row: Parameters<typeof documentStatusFromRow>[0]): DocumentStatus => documentStatusFromRow(row);

/** The profile's mail settings (see LocalProfile); a bad one is refused as invalid, naming the profile key. */
async function localMailDefaults(ctx: Ctx, profile: LocalProfile) {
  // The data dir's account is its own operator: without mailFrom, its issuer's own address is the From.
  if (profile.outboxOnly) return { issuerAsSender: true };
  const { mailDefaultsFrom, MailSettingsError } = await import('../service/mail-settings.js');
  const env = ctx.io.env;
  const emulator = (profile.env ?? 'local') === 'local';
  const url = profile.smtpUrl ? { v: profile.smtpUrl, n: 'smtpUrl' } : !emulator && env.FECR_SMTP_URL ? { v: env.FECR_SMTP_URL, n: 'FECR_SMTP_URL' } : { v: undefined, n: 'smtpUrl' };
  const from = profile.mailFrom ? { v: profile.mailFrom, n: 'mailFrom' } : { v: env.FECR_MAIL_FROM, n: 'FECR_MAIL_FROM' };
  const replyTo = profile.mailReplyTo ? { v: profile.mailReplyTo, n: 'mailReplyTo' } : { v: env.FECR_MAIL_REPLY_TO, n: 'FECR_MAIL_REPLY_TO' };
  try {
    return { ...mailDefaultsFrom({ smtpUrl: url.v, from: from.v, replyTo: replyTo.v }, { smtpUrl: url.n, from: from.n, replyTo: replyTo.n }), issuerAsSender: true };
  } catch (e) {
    if (e instanceof MailSettingsError) throw new BackendError('invalid', `${e.field}: ${e.message}`, [{ path: e.field, message: e.message }]);
    throw e;
  }
}
