/**
 * The service run in this process for one CLI command (local mode): nothing runs in the background between
 * commands, so the command itself is the worker, and in env local the Hacienda emulator runs here too.
 *
 *  - `untilSent`: the worker runs until a submitted document's send job is done (Hacienda took the POST);
 *  - `waitForVerdict`: the worker runs until Hacienda decides or the deadline;
 *  - `refresh`: one round of work for an undecided document (one status query), so it shows Hacienda's latest
 *    answer, as a hosted instance would.
 *
 * In env local the emulator is started lazily by the first call that reaches Hacienda (`startHacienda`), its state
 * in `<dataDir>/emulator.db`; the service's context is then pointed at it. Heavy modules (the worker, the emulator,
 * the lookups) are imported on first use.
 */
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { FINAL_STATES, HELD_STATES } from '../core/lifecycle.js';
import type { Worker, WorkerOptions } from './delivery/worker.js';
import { documentStateById, documentStateOf } from '../store/documents.js';
import type { DocumentState } from '../store/schema.js';
import type { ServiceContext } from './context.js';
import { DocumentWatch } from './document-watch.js';
import type { MailRenderThread } from './delivery/email-render-pool.js';
import type { FaultFile } from '../emulator/faults.js';
import { hurryDocumentJobs, mailJobsToRun, openDeliveryJobsOf, openMailJobsOf, sendJobOf } from '../store/jobs.js';

/**
 * A batch's first status query, when the embedded emulator tells each verdict (issue 31): the verdict makes the
 * poll due at once (delivery/verdict-hints.ts), so the scheduled one is only the fallback.
 */
const HINTED_FIRST_POLL_MS = 5_000;

/** The default account of local mode (created on first use with a random password nobody needs). */
export const LOCAL_ACCOUNT = 'local';

export interface LocalRunOptions {
  /** The data dir (the emulator's database lives there; store faults name it). */
  dataDir: string;
  /**
   * Many documents (a batch): env local runs the emulator on a worker thread of its own, beside the service's
   * event loop (more throughput; the thread costs a few hundred ms to start, so one-document commands keep the
   * emulator on their own thread).
   */
  bulk?: boolean;
  /** Env local: the emulator's processing delay, ms (default 50). */
  emulatorDelayMs?: number;
  /** The mail thread, started early by a one-document command (client/local-backend.ts); closed with the run. */
  mailThread?: MailRenderThread;
  /** Env local: the faults the embedded emulator starts with (a fault file's, docs/faults.md). */
  emulatorFaults?: FaultFile;
  /** Env local: Hacienda is an external emulator already in the service's endpoints (a profile's haciendaUrl); none is started. */
  externalEmulator?: boolean;
}

/** The embedded emulator as the local run uses it: in this thread or on a worker thread. */
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

/**
 * Env local: retries inside one call to the emulator (worker.ts `haciendaRetry`; its default for Hacienda is 3 attempts
 * from 200 ms). More, sooner attempts: with a fault file's 30 % of 5xx and 20 % of lost answers, a document is
 * received and decided in about the time it takes without faults (test/faults-batch.test.ts, docs/faults.md).
 */
const LOCAL_RETRY = { maxAttempts: 5, baseDelayMs: 25, maxDelayMs: 400, maxServerWaitMs: 10_000 } as const;

const FINAL: readonly DocumentState[] = FINAL_STATES;
/** Where a wait for a verdict ends: decided, or held until the user acts (credenciales_invalidas). */
const ENDS_WAIT: readonly DocumentState[] = [...FINAL_STATES, ...HELD_STATES];

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/** True when `p` settles within `ms`; the timer is cleared either way (no stray timer keeps the process alive). */
function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), Math.max(0, ms))));
  return Promise.race([p.then(() => true), timeout]).finally(() => clearTimeout(timer));
}

/**
 * The id of the account `base` of the data dir; the default account `local` is created on first use (null: no
 * such account, and it is not the default one).
 */
export async function localAccountId(svc: ServiceContext, base: string, randomBytes: (n: number) => Uint8Array): Promise<number | null> {
  const { findAccount, createAccount, AccountError } = await import('./accounts.js');
  const found = await findAccount(svc, base);
  if (found) return found.id;
  if (base !== LOCAL_ACCOUNT) return null;
  try {
    // Nobody logs in as `local`: the password only satisfies the table; it is never shown or kept.
    const password = Buffer.from(randomBytes(32)).toString('base64url');
    return (await createAccount(svc, { base, password })).account.id;
  } catch (e) {
    if (e instanceof AccountError && e.code === 'account_exists') {
      const again = await findAccount(svc, base);
      if (again) return again.id;
    }
    throw e;
  }
}

/** The id and state of an account's document (no XML); null when there is none. */
export async function documentStateFor(svc: ServiceContext, accountId: number, clave: string): Promise<{ id: number; state: DocumentState } | null> {
  return (await documentStateOf(svc.store.db, accountId, clave)) ?? null;
}

export class LocalRun {
  private hacienda: Promise<void> | undefined;
  private emulator: EmbeddedEmulator | undefined;
  private worker: Worker | undefined;
  /** The embedded emulator (on its thread) tells each verdict to the worker (verdict-hints.ts). */
  private hinted = false;
  private workerStarting?: Promise<Worker>;
  private watch?: DocumentWatch;
  private mails?: MailRenderThread;
  private closed = false;

  constructor(
    private readonly svc: ServiceContext,
    private readonly opts: LocalRunOptions,
  ) {}

  /** Env local: starts the embedded emulator and points the service at it (once). */
  startHacienda(): Promise<void> {
    return (this.hacienda ??= (async () => {
      if (this.closed) throw new Error('the local run is closed: Hacienda is not started again');
      if (this.svc.hacienda.environment !== 'local' || this.opts.externalEmulator) return;
      const { resolveEndpoints } = await import('../hacienda/index.js');
      const f = this.opts.emulatorFaults;
      const options = {
        dataFile: path.join(this.opts.dataDir, 'emulator.db'),
        processingDelayMs: this.opts.emulatorDelayMs ?? 50,
        ...(f ? { faults: f.faults, ...(f.seed !== undefined ? { seed: f.seed } : {}) } : {}),
      };
      try {
        await this.startEmulator(options);
      } catch (e) {
        // The emulator's database lives in the same data dir: a full disk is said as such.
        throw (await import('../store/faults.js')).asStoreFault(e, this.opts.dataDir) ?? e;
      }
      this.svc.hacienda = { environment: 'local', endpoints: resolveEndpoints('local', { baseUrl: this.emulator!.url }) };
    })());
  }

  /** Wakes the worker (starting it first): queued jobs run while the command goes on. */
  async keepWorking(): Promise<void> {
    (await this.startWorker()).wake();
  }

  /**
   * Runs the worker until the document left `pendiente`, or its send attempt failed (retried later), or the timeout.
   * `tried`: the attempts its send job had made before (a document released after its credentials were refused).
   */
  async untilSent(documentId: number, timeoutMs: number, tried = 0): Promise<void> {
    const worker = await this.startWorker();
    worker.wake();
    const deadline = Date.now() + timeoutMs;
    const watch = this.documentWatch();
    while (Date.now() < deadline) {
      // Left pendiente (sent, or refused by Hacienda's validation)?
      if ((await watch.changeFrom(documentId, 'pendiente', Math.min(deadline - Date.now(), 100))) !== undefined) return;
      // Still pendiente after a while: a send attempt that failed is retried later by the queue; don't hold the caller.
      const send = await sendJobOf(this.svc.store.db, documentId);
      if (!send || send.done_at !== null || (send.attempts > tried && send.lease_owner === null)) return;
    }
  }

  /** untilSent for many documents at once (one shared watch): those an issuer update released, tried before. */
  async untilAllSent(documentIds: readonly number[], timeoutMs: number): Promise<void> {
    const tried = await Promise.all(documentIds.map(async (id) => (await sendJobOf(this.svc.store.db, id))?.attempts ?? 0));
    await Promise.all(documentIds.map((id, i) => this.untilSent(id, timeoutMs, tried[i])));
  }

  /**
   * Runs the worker until the document's mails to its receptor are sent (an .eml in the outbox, or the SMTP server's
   * answer), or wait for a retry, or the timeout: nothing runs between two CLI commands, so the command that saw
   * the verdict aceptado (or asked for a resend) delivers its mail.
   */
  async untilMailed(documentId: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const open = () => openMailJobsOf(this.svc.store.db, documentId);
    if ((await open()).length === 0) return;
    (await this.startWorker()).wake();
    while (Date.now() < deadline) {
      const jobs = await open();
      // Done, or each waiting for a retry after a failed attempt (the queue retries it later; don't hold the caller).
      if (jobs.every((j) => j.attempts > 0 && j.lease_owner === null)) return;
      await sleep(15);
    }
  }

  /**
   * Runs the worker until every queued mail to a receptor has had its attempt (sent, or waiting for a retry), or
   * `signal` aborts (the mails stay queued: the next command's worker, or `fecr serve`, sends them). `onProgress`
   * hears how many are left, at most every `progressMs`. Returns how many were left.
   */
  async untilMailsSent(opts: { signal?: AbortSignal; onProgress?: (left: number) => void; progressMs?: number } = {}): Promise<number> {
    let left = await mailJobsToRun(this.svc.store.db);
    if (left === 0) return 0;
    const worker = await this.startWorker();
    worker.holdMails(false);
    worker.wake();
    let told = 0;
    while (left > 0 && !opts.signal?.aborted) {
      await this.throwStoreFault();
      if (Date.now() - told >= (opts.progressMs ?? 1_000)) {
        opts.onProgress?.(left);
        told = Date.now();
      }
      await sleep(50);
      left = await mailJobsToRun(this.svc.store.db);
    }
    opts.onProgress?.(left);
    return left;
  }

  /**
   * One round of work for an undecided document: the emulator finishes what it received, the document's
   * jobs become due, and the worker runs each of them once (or the timeout).
   */
  async refresh(doc: { id: number }, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const jobs = () => openDeliveryJobsOf(this.svc.store.db, doc.id);
    const before = await jobs();
    if (before.length === 0) return;
    await this.startWorker();
    if (this.emulator) await within(this.emulator.whenIdle(), deadline - Date.now());
    await this.nudge(doc.id);
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
   * Runs the worker until the document reaches a final state, or is held for its issuer's refused credentials
   * (nothing happens then until the user acts), or the deadline (epoch ms, Date.now()'s clock). `onChange` hears every
   * state it passes through that is not final. Returns the last state seen.
   */
  async waitForVerdict(doc: { id: number; state: DocumentState }, deadline: number, onChange?: (state: DocumentState) => Promise<void>): Promise<DocumentState> {
    if (ENDS_WAIT.includes(doc.state)) return doc.state;
    const worker = await this.startWorker();
    // Told the verdicts (a batch), nothing needs hurrying: a document is sent when its send job is due and polled when
    // Hacienda decides, so the worker is only woken. Hurrying its poll would query Hacienda before the verdict (and
    // cost two statements per document).
    if (this.hinted) worker.wake();
    else await this.nudge(doc.id);
    let nudged = Date.now();
    let state = doc.state;
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
      const next = await watch.changeFrom(doc.id, state, Math.min(left, window));
      if (next !== undefined) {
        state = next;
        if (ENDS_WAIT.includes(state)) break;
        await onChange?.(state);
        continue;
      }
      if (this.emulator && !this.hinted && state !== 'pendiente' && Date.now() - nudged >= 100 && (await this.emulator.isIdle())) {
        // The emulator is in this process: once it has decided, query the status now instead of at the
        // worker's next scheduled poll (what Hacienda's callback does for a hosted service).
        await this.nudge(doc.id);
        nudged = Date.now();
      }
    }
    return state;
  }

  /**
   * Jobs in flight finish; queued ones stay in the data dir for the next command (or `fecr serve`). Whatever this run
   * started is stopped, even when it is still starting: a verb that began the emulator's start and then had nothing to
   * send (`fecr recibidos import` of refused files, issue 37) must not leave its HTTP server open behind the close,
   * or the process never exits. So the starts are awaited (their failure is the caller's, already said) first.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([this.hacienda, this.workerStarting]);
    await this.worker?.stop();
    await (this.mails ?? this.opts.mailThread)?.close();
    this.watch?.close();
    if (this.hacienda) {
      const { closeLookups } = await import('./lookups.js');
      await closeLookups(this.svc);
    }
    await this.emulator?.close();
  }

  private async startEmulator(options: { dataFile: string; processingDelayMs: number; faults?: FaultFile['faults']; seed?: number }): Promise<void> {
    if (this.opts.bulk) {
      // On a thread of its own: the emulator's work (HTTP, state, the analysis of every document) runs beside
      // this event loop, which has the service's work to do (a batch keeps both busy).
      const { startEmulatorThread } = await import('../emulator/thread.js');
      const t = await startEmulatorThread({ ...options, onDecided: (claves) => this.worker?.verdictsDecided(claves) });
      this.hinted = true;
      this.emulator = { url: t.url, whenIdle: () => t.whenIdle(), isIdle: async () => (await t.pending()) === 0, close: () => t.close() };
    } else {
      const { startEmulator } = await import('../emulator/index.js');
      const e = await startEmulator(options);
      this.emulator = { url: e.url, whenIdle: () => e.state.whenIdle(), isIdle: async () => e.state.pending === 0, fault: () => e.state.processingFault, close: () => e.close() };
    }
  }

  /** One worker per run, even when several calls start it at once. */
  private startWorker(): Promise<Worker> {
    return (this.workerStarting ??= this.createWorker());
  }

  private async createWorker(): Promise<Worker> {
    await this.startHacienda();
    const { startWorker } = await import('./delivery/worker.js');
    const local = this.svc.hacienda.environment === 'local';
    const opts: WorkerOptions = {
      mailRenderer: await this.mailThread(),
      // A person is waiting: poll sooner and never more than a few seconds apart.
      firstPollDelayMs: local ? (this.hinted ? HINTED_FIRST_POLL_MS : 100) : 500,
      pollMaxIntervalMs: local ? 1_000 : 5_000,
      // The emulator answers on this machine: a 5xx or a lost answer (a fault file's) is asked again within tens of ms,
      // not Hacienda's hundreds (the worker's default, kept for sandbox and production).
      ...(local ? { haciendaRetry: LOCAL_RETRY, sendBackoffBaseMs: 250 } : {}),
      pollIntervalMs: 20,
      // Short leases: after a Ctrl-C or kill, the next command takes the jobs over within seconds.
      leaseMs: 6_000,
      // An account's suppliers' mailbox (`fecr accounts mailbox`) is read by `fecr serve`, never by a CLI command.
      skipJobTypes: ['mailbox'],
      ...(this.hinted ? { verdictHints: true } : {}),
    };
    this.worker = startWorker(this.svc, opts);
    // A batch takes every verdict first: its mails wait for untilMailsSent.
    if (this.opts.bulk) this.worker.holdMails(true);
    return this.worker;
  }

  /** The thread that renders receptor mails (email-render-pool.ts), made on first use. */
  private async mailThread(): Promise<MailRenderThread> {
    if (this.mails) return this.mails;
    const { MailRenderThread } = await import('./delivery/email-render-pool.js');
    // A batch's mails come after its verdicts (the emulator's thread is idle by then): one thread per core, at most 4.
    const threads = this.opts.bulk ? Math.max(1, Math.min(4, availableParallelism())) : 1;
    return (this.mails ??= this.opts.mailThread ?? new MailRenderThread(threads, (e) =>
      this.svc.logger.warn({ err: e instanceof Error ? e.message : String(e) }, 'the mail thread failed; mails are rendered on the main thread'),
    ));
  }

  /** Makes the undecided document's pending send/poll jobs due now and wakes the worker (what Hacienda's callback does). */
  private async nudge(documentId: number): Promise<void> {
    const state = await documentStateById(this.svc.store.db, documentId);
    if (state !== undefined && !FINAL.includes(state)) await hurryDocumentJobs(this.svc, documentId, this.svc.now());
    this.worker?.wake();
  }

  private documentWatch(): DocumentWatch {
    return (this.watch ??= new DocumentWatch(this.svc.store.db));
  }

  /**
   * Waiting makes no sense while the data dir cannot take a verdict: when the worker or the embedded emulator
   * last failed on a full disk (or a lost store), that is the answer. Nothing was lost: the document and its
   * jobs are stored, and the next command picks them up.
   */
  private async throwStoreFault(): Promise<void> {
    const seen = this.worker?.lastStoreFault ?? this.emulator?.fault?.();
    if (!seen) return;
    const fault = (await import('../store/faults.js')).asStoreFault(seen, this.opts.dataDir);
    if (fault) throw fault;
  }
}
