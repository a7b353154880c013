import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import { renderTable } from '../../cli/table.js';
import { withBackend } from '../backend.js';
import type { LookupFlags } from './index.js';

export async function cabys(ctx: Ctx, words: string[], opts: LookupFlags): Promise<void> {
  const text = words.join(' ').trim();
  if (text === '') throw new UsageError('give the words to search for, e.g. fecr cabys cafe molido');
  const rows = await withBackend(ctx, (b) => b.cabys(text));
  if (rows.length === 0) throw new UserError(`no CABYS code matches "${text}"`);
  if (opts.json) return printJson(ctx, rows);
  writeLine(ctx.io.stdout, renderTable(ctx, ['codigo', 'descripcion'], rows.map((r) => [r.codigo, r.descripcion])));
}

export async function contribuyente(ctx: Ctx, idArg: string, opts: LookupFlags): Promise<void> {
  const id = idArg.trim();
  if (!/^[\d\s-]+$/.test(id)) throw new UsageError(`ID must be an identificación made of digits (got "${idArg}")`);
  const t = await withBackend(ctx, (b) => b.taxpayer(id));
  if (!t) throw new UserError(`no taxpayer with identificación ${id} in Hacienda's registry`);
  if (opts.json) return printJson(ctx, t);
  writeLine(ctx.io.stdout, renderTable(ctx, ['identificacion', 'tipoIdentificacion', 'nombre'], [[t.identificacion, t.tipoIdentificacion, t.nombre]]));
}

export async function exoneracion(ctx: Ctx, numeroArg: string, opts: LookupFlags): Promise<void> {
  const numero = numeroArg.trim();
  if (numero === '') throw new UsageError('NUMERO must not be empty');
  const e = await withBackend(ctx, (b) => b.exoneracion(numero));
  if (!e) throw new UserError(`no exoneración ${numero} is known to Hacienda`);
  if (opts.json) return printJson(ctx, e);
  writeLine(
    ctx.io.stdout,
    renderTable(ctx, ['numeroDocumento', 'estado', 'porcentajeExoneracion', 'fechaVencimiento'], [[e.numeroDocumento, e.estado, String(e.porcentajeExoneracion), e.fechaVencimiento]]),
  );
}
