/**
 * `fecr hacienda suppliers issue --to ID [--count N] [--out DIR] [--tipo FE|NC|ND|FEC] [--proveedor ID]
 * [--referencia CLAVE] [--url URL] [--timeout S] [--json]`: the emulator's test suppliers issue signed comprobantes
 * to the receptor `--to`, written as `<clave>.xml` for `fecr recibidos import DIR` (the buyer's side, rehearsed
 * offline: issue 28). Which emulator: `--url` names a running `fecr hacienda serve` (shared by several jobs); without
 * it, the profile's Hacienda (the global --profile): a local profile in env local has its embedded emulator, whose
 * state lives in the profile's data dir, so the documents are known to the Hacienda its import and answers ask.
 *
 * The emulator decides a supplier's document a moment after issuing it, and a MensajeReceptor is refused until then
 * (issue 26): this verb waits (up to --timeout, default 60 s; 0: not at all) until each document is decided before
 * writing the files, so an import and an answer right after work. Exit 0; 8 when the wait ended first.
 */
import type { Ctx } from '../../cli/context.js';
import { EXIT, SilentExit, UsageError, UserError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';
import { SUPPLIER_DOC_KINDS, type SupplierDocKind, type SupplierIssued, type SupplierIssueRequest } from '../../client/emulator-suppliers.js';
import { withBackend } from '../backend.js';
import { checkClave, timeoutMs } from '../documents/shared.js';
import { issueAt, supplierReceptor, writeSupplierFiles } from './shared.js';

export interface SuppliersIssueFlags {
  to: string;
  count: string;
  out?: string;
  tipo: string;
  proveedor?: string;
  referencia?: string;
  url?: string;
  timeout?: string;
  json?: boolean;
}

const UNDECIDED = new Set(['recibido', 'procesando']);

export async function run(ctx: Ctx, f: SuppliersIssueFlags): Promise<void> {
  const count = Number(f.count);
  if (!Number.isInteger(count) || count < 1 || count > 1000) throw new UsageError('--count must be a whole number from 1 to 1000');
  const tipo = f.tipo.toUpperCase() as SupplierDocKind;
  if (!SUPPLIER_DOC_KINDS.includes(tipo)) throw new UsageError(`--tipo must be one of ${SUPPLIER_DOC_KINDS.join(', ')}`);
  if ((tipo === 'NC' || tipo === 'ND') !== (f.referencia !== undefined)) {
    throw new UsageError(f.referencia === undefined ? `--tipo ${tipo} needs --referencia CLAVE: the document it corrects (one this emulator received)` : '--referencia is for --tipo NC or ND');
  }
  if (f.proveedor !== undefined && !/^\d{9,12}$/.test(f.proveedor)) throw new UsageError("--proveedor must be a test supplier's identificación (9-12 digits)");
  const wait = f.timeout === '0' ? 0 : timeoutMs(f.timeout);
  const req: SupplierIssueRequest = {
    receptor: supplierReceptor('--to', f.to),
    count,
    tipo,
    ...(f.proveedor !== undefined ? { proveedor: f.proveedor } : {}),
    ...(f.referencia !== undefined ? { referencia: checkClave(f.referencia) } : {}),
    ...(wait > 0 ? { waitMs: wait } : {}),
  };
  const docs = f.url !== undefined ? await issueAt(emulatorUrl(f.url), req) : await throughProfile(ctx, req);
  const files = f.out === undefined ? undefined : writeSupplierFiles(ctx, f.out, docs);
  if (f.json) {
    printJson(ctx, docs.map((d, i) => ({ clave: d.clave, tipo: d.tipo, proveedor: d.proveedor, estado: d.estado ?? null, ...(files ? { file: files[i] } : {}) })));
  } else {
    // The supplier's name comes from the emulator (a URL the user gave): through the sanitiser.
    for (const [i, d] of docs.entries()) writeLine(ctx.io.stdout, safeText(`${files ? files[i] : d.clave} ${d.tipo} from ${d.proveedor.identificacion} ${d.proveedor.nombre}: ${d.estado ?? 'recibido'}`));
  }
  const undecided = docs.filter((d) => UNDECIDED.has(d.estado ?? 'recibido'));
  if (wait > 0 && undecided.length > 0) {
    if (!f.json) info(ctx, `${undecided.length} of ${docs.length} not decided by the emulator within --timeout: an answer (fecr recibidos aceptar) is refused until it has`);
    throw new SilentExit(EXIT.pending);
  }
}

function emulatorUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UsageError(`--url must be the emulator's URL, like http://127.0.0.1:8090 (got "${url}")`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UsageError('--url must be an http or https URL');
  return u.origin + u.pathname.replace(/\/+$/, '');
}

/** The profile's embedded emulator (a local profile in env local; others cannot play suppliers). */
async function throughProfile(ctx: Ctx, req: SupplierIssueRequest): Promise<SupplierIssued[]> {
  return withBackend(ctx, async (b) => {
    const r = b.recibidos?.();
    if (!r?.supplierInvoices) throw new UserError("this profile has no emulator of its own (a remote profile): give --url, the fecr hacienda serve its service uses");
    return r.supplierInvoices(req);
  });
}
