import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { readAll, readInput, readJson, writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { renderTable } from '../../cli/table.js';
import { BackendError } from '../../client/backend.js';
import { withBackend } from '../backend.js';
import type { EmisorFlags } from './index.js';

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
  await withBackend(ctx, (b) => (verb === 'register' ? b.registerIssuer(r) : b.updateIssuer(r)));
  const id = String(r.identificacion ?? '').trim();
  if (opts.json) printJson(ctx, { identificacion: id, action: verb === 'register' ? 'registered' : 'updated' });
  else info(ctx, `${verb === 'register' ? 'registered' : 'updated'} issuer ${id}`);
}

/** No FILE.json: ask in a terminal; without one, a usage error (prompts never appear without a TTY). */
async function saveInteractively(ctx: Ctx, verb: 'register' | 'update', opts: EmisorFlags): Promise<void> {
  if (!ctx.io.stdinIsTTY) {
    throw new UsageError(`missing argument FILE.json: the issuer record to ${verb} (fecr emisor ${verb} FILE.json; run it in a terminal without FILE.json to be asked)`);
  }
  if (opts.pinStdin) throw new UsageError('--pin-stdin needs FILE.json (in a terminal without FILE.json the PIN is asked, hidden)');
  const { askIssuerRecord } = await import('./interactive.js');
  const id = await withBackend(ctx, async (b) => {
    const r = await askIssuerRecord(ctx, b, verb, { ...(opts.p12 !== undefined ? { p12: opts.p12 } : {}) });
    await (verb === 'register' ? b.registerIssuer(r) : b.updateIssuer(r));
    return String(r.identificacion);
  });
  if (opts.json) printJson(ctx, { identificacion: id, action: verb === 'register' ? 'registered' : 'updated' });
  else info(ctx, `${verb === 'register' ? 'registered' : 'updated'} issuer ${id}`);
}

export async function show(ctx: Ctx, idArg: string, opts: EmisorFlags): Promise<void> {
  const id = idArg.trim();
  const [s] = await withBackend(ctx, async (b) => {
    try {
      return await b.listIssuers(id);
    } catch (e) {
      // A hosted fecr from before /api/consultar/emisores: the spec's lookup (six fields) still answers.
      if (!(e instanceof BackendError && e.code === 'not_found')) throw e;
      const summary = await b.getIssuer(id);
      return summary ? [summary] : [];
    }
  });
  if (!s) throw new UserError(`no issuer ${id} is registered (fecr emisor list shows the account's issuers)`);
  if (opts.json) return printJson(ctx, s);
  writeLine(ctx.io.stdout, renderTable(ctx, ['field', 'value'], fieldRows(s as unknown as Record<string, unknown>)));
}

export async function list(ctx: Ctx, opts: EmisorFlags): Promise<void> {
  const issuers = await withBackend(ctx, (b) => b.listIssuers());
  if (opts.json) return printJson(ctx, issuers);
  if (issuers.length === 0) {
    info(ctx, 'no issuer is registered yet (fecr emisor register issuer.json; fecr init writes an issuer.json to start from)');
    return;
  }
  writeLine(
    ctx.io.stdout,
    renderTable(
      ctx,
      ['identificacion', 'tipo', 'nombre', 'codigoActividad', 'sucursal', 'ambiente', 'correoElectronico'],
      issuers.map((i) => [i.identificacion, i.tipoIdentificacion, i.nombre ?? i.nombreComercial, i.codigoActividad, String(i.sucursal), ambienteName(i.ambiente), i.correoElectronico]),
    ),
  );
}

function ambienteName(a: number): string {
  return a === 1 ? '1 production' : a === 2 ? '2 testing' : String(a);
}

/** `ubicacion.canton`-style rows of a record, in its key order. */
function fieldRows(record: Record<string, unknown>, prefix = ''): string[][] {
  return Object.entries(record).flatMap(([k, v]) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? fieldRows(v as Record<string, unknown>, `${prefix}${k}.`)
      : [[`${prefix}${k}`, k === 'ambiente' && typeof v === 'number' ? ambienteName(v) : String(v)]],
  );
}
