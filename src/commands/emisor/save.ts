/** `fecr emisor register|update [FILE.json]`: an issuer's record sent, from the file or asked for in a terminal (interactive.ts). */
import type { Ctx } from '../../cli/context.js';
import { certificateFailure } from '../../cli/certificate.js';
import { EXIT, SilentExit, UsageError, UserError } from '../../cli/errors.js';
import type { IssuerUpdate } from '../../client/backend.js';
import { heldLine } from '../documents/shared.js';
import { readAll, readInput, readJson } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { withBackend } from '../backend.js';
import type { EmisorFlags } from './shared.js';

export async function save(ctx: Ctx, verb: 'register' | 'update', file: string | undefined, opts: EmisorFlags): Promise<void> {
  if (!file) return saveInteractively(ctx, verb, opts);
  if (file === '-' && opts.pinStdin) throw new UsageError('--pin-stdin needs the record in a file: stdin cannot carry both');
  const record = await readJson(ctx.io, file);
  if (typeof record !== 'object' || record === null || Array.isArray(record)) throw new UserError(`${file === '-' ? 'stdin' : file}: the issuer record must be a JSON object`);
  const r = record as Record<string, unknown>;
  if (opts.p12) r.certificadoHacienda = (await readInput(ctx.io, opts.p12)).toString('base64');
  if (opts.pinStdin) {
    const pin = (await readAll(ctx.io.stdin)).toString('utf8').split(/\r?\n/)[0] ?? '';
    if (!pin) throw new UsageError('no PIN on stdin (--pin-stdin)');
    r.pinCertificado = pin;
  }
  await checkCertificateOpens(ctx, opts.p12 ?? `${file === '-' ? 'stdin' : file}: certificadoHacienda`, r);
  const update = await withBackend(ctx, (b) => (verb === 'register' ? b.registerIssuer(r) : b.updateIssuer(r)));
  saved(ctx, verb, String(r.identificacion ?? '').trim(), update, opts);
}

/**
 * The record's certificate opens with its PIN: checked here so that a wrong PIN is worded as every verb words it
 * (cli/certificate.ts), in any profile; anything else about the certificate (a file that is no .p12, its owner, its
 * validity) is the service's to judge, in the API's words.
 */
async function checkCertificateOpens(ctx: Ctx, where: string, r: Record<string, unknown>): Promise<void> {
  if (typeof r.certificadoHacienda !== 'string' || typeof r.pinCertificado !== 'string' || r.pinCertificado === '') return;
  const { describeP12 } = await import('../../core/sign/p12.js');
  try {
    describeP12(Buffer.from(r.certificadoHacienda, 'base64'), r.pinCertificado, ctx.now());
  } catch (e) {
    if ((e as { code?: unknown }).code === 'WRONG_PIN') throw new UserError(`${where}: ${certificateFailure(e)}`);
  }
}

/**
 * What was saved, and for an update the documents it released: those held because Hacienda had refused the issuer's
 * credentials (credenciales_invalidas) are sent now (local mode); refused again, the same line as `fecr send` says.
 */
function saved(ctx: Ctx, verb: 'register' | 'update', id: string, update: void | IssuerUpdate, opts: EmisorFlags): void {
  const released = update ? update.released : 0;
  const stillHeld = update ? update.stillHeld : 0;
  if (opts.json) printJson(ctx, { identificacion: id, action: verb === 'register' ? 'registered' : 'updated', ...(released > 0 ? { released, stillHeld } : {}) });
  else info(ctx, `${verb === 'register' ? 'registered' : 'updated'} issuer ${id}`);
  if (released > stillHeld && !opts.json) {
    const sent = released - stillHeld;
    info(ctx, `${sent} document${sent === 1 ? '' : 's'} held for the refused credentials sent to Hacienda (fecr documents list, fecr status CLAVE for the verdicts)`);
  }
  if (stillHeld > 0) {
    info(ctx, `error: ${heldLine(id || undefined, { count: stillHeld })}`);
    throw new SilentExit(EXIT.auth);
  }
}

/** No FILE.json: ask in a terminal; without one, a usage error (prompts never appear without a TTY). */
async function saveInteractively(ctx: Ctx, verb: 'register' | 'update', opts: EmisorFlags): Promise<void> {
  if (!ctx.io.stdinIsTTY) {
    throw new UsageError(`missing argument FILE.json: the issuer record to ${verb} (fecr emisor ${verb} FILE.json; run it in a terminal without FILE.json to be asked)`);
  }
  if (opts.pinStdin) throw new UsageError('--pin-stdin needs FILE.json (in a terminal without FILE.json the PIN is asked, hidden)');
  const { askIssuerRecord } = await import('./interactive.js');
  const { id, update } = await withBackend(ctx, async (b) => {
    const r = await askIssuerRecord(ctx, b, verb, { ...(opts.p12 !== undefined ? { p12: opts.p12 } : {}) });
    const update = await (verb === 'register' ? b.registerIssuer(r) : b.updateIssuer(r));
    return { id: String(r.identificacion), update };
  });
  saved(ctx, verb, id, update, opts);
}
