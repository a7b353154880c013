import type { Ctx } from '../../cli/context.js';
import { waitForStopSignal } from '../../cli/signals.js';
import { EXIT, SilentExit, UsageError, UserError } from '../../cli/errors.js';
import { resolvePath, writeLine } from '../../cli/io.js';
import { info } from '../../cli/output.js';

export interface ServeEmulatorFlags {
  host: string;
  port: string;
  users?: string;
  data?: string;
  delay: string;
  latency?: string;
  errorRate?: string;
  rateLimitRate?: string;
  dropRate?: string;
  lostResponseRate?: string;
  idpOutage?: boolean;
  reject?: string[];
  indexDelay?: string;
  quotaPerMinute?: string;
  faults?: string;
  seed?: string;
  validationThreads?: string;
  supplierInvoices?: string;
  supplierCount: string;
  supplierOut?: string;
}

function num(flag: string, value: string | undefined, { min = 0, max = Number.MAX_SAFE_INTEGER, integer = false } = {}): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
    throw new UsageError(`${flag} must be ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}`);
  }
  return n;
}

export async function run(ctx: Ctx, f: ServeEmulatorFlags): Promise<void> {
  const port = num('--port', f.port, { max: 65535, integer: true })!;
  const processingDelayMs = num('--delay', f.delay, { max: 3_600_000, integer: true })!;
  const faults = {
    ...(f.latency !== undefined && { latencyMs: num('--latency', f.latency, { max: 600_000, integer: true }) }),
    ...(f.errorRate !== undefined && { errorRate: num('--error-rate', f.errorRate, { max: 1 }) }),
    ...(f.rateLimitRate !== undefined && { rateLimitRate: num('--rate-limit-rate', f.rateLimitRate, { max: 1 }) }),
    ...(f.dropRate !== undefined && { dropRate: num('--drop-rate', f.dropRate, { max: 1 }) }),
    ...(f.lostResponseRate !== undefined && { lostResponseRate: num('--lost-response-rate', f.lostResponseRate, { max: 1 }) }),
    ...(f.idpOutage && { idpOutage: true }),
    ...(f.reject && { rejectClaves: f.reject }),
    ...(f.indexDelay !== undefined && { indexDelayMs: num('--index-delay', f.indexDelay, { max: 3_600_000, integer: true }) }),
    ...(f.quotaPerMinute !== undefined && { quotaPerMinute: num('--quota-per-minute', f.quotaPerMinute, { min: 1, max: 1_000_000, integer: true }) }),
  };
  const validationThreads = num('--validation-threads', f.validationThreads, { max: 64, integer: true });
  // The fault file first, the fault flags over it.
  const file = f.faults === undefined ? undefined : await readFaults(ctx, f.faults);
  const { startEmulator } = await import('../../emulator/index.js');
  let emulator;
  try {
    emulator = await startEmulator({
      host: f.host,
      port,
      processingDelayMs,
      users: f.users === undefined ? undefined : resolvePath(ctx.io, f.users),
      dataFile: f.data === undefined ? undefined : resolvePath(ctx.io, f.data),
      faults: { ...file?.faults, ...faults },
      seed: num('--seed', f.seed, { integer: true }) ?? file?.seed,
      validationThreads,
      validationThreadsAtStart: true,
    });
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'EADDRINUSE') throw new UserError(`port ${port} on ${f.host} is already in use`);
    if (err.code === 'ENOENT') throw new UserError(`${err.path ?? 'file'}: no such file`);
    throw new UserError(`cannot start the emulator: ${err.message}`, 1);
  }
  let supplierDocuments: { clave: string; proveedor: string; file?: string }[] | undefined;
  if (f.supplierInvoices !== undefined) {
    const count = num('--supplier-count', f.supplierCount, { min: 1, max: 1000, integer: true })!;
    const { issueSupplierInvoices } = await import('./shared.js');
    try {
      supplierDocuments = await issueSupplierInvoices(ctx, emulator.url, f.supplierInvoices, count, f.supplierOut);
    } catch (e) {
      await emulator.close();
      throw e;
    }
  }
  writeLine(ctx.io.stdout, JSON.stringify({ url: emulator.url, ...(supplierDocuments ? { supplierDocuments } : {}) }));
  info(ctx, `Hacienda emulator listening on ${emulator.url} (Ctrl-C to stop)`);
  await waitForStopSignal();

  await emulator.close();
}

/** The fault file of --faults; a bad one is its findings, one per line, and exit 1. */
async function readFaults(ctx: Ctx, file: string) {
  const { readFaultFile, FaultFileError } = await import('../../emulator/faults.js');
  try {
    return readFaultFile(resolvePath(ctx.io, file), file);
  } catch (e) {
    if (!(e instanceof FaultFileError)) throw e;
    if (e.findings.length === 0) throw new UserError(e.message);
    const { printFindings } = await import('../../cli/findings.js');
    printFindings(ctx, e.message, e.findings);
    throw new SilentExit(EXIT.error);
  }
}
