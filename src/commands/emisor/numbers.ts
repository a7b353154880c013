/**
 * `fecr emisor numbers ID [--set FE=1501 …] [--sucursal N] [--terminal N]`: the next numeroReferencia of each kind of
 * document of an issuer (the one a body without numeroReferencia takes in local mode), and every sucursal/terminal
 * series in use; `--set` says where series start, for an issuer coming from another system (refused below a number
 * already used).
 */
import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { checkTableFlags, renderTable } from '../../cli/table.js';
import type { IssuerNumbers, StartRequest } from '../../client/backend.js';
import { withBackend } from '../backend.js';

export interface NumbersFlags {
  set?: string[];
  sucursal?: string;
  terminal?: string;
  json?: boolean;
  csv?: boolean;
}

const KINDS = ['FE', 'ND', 'NC', 'TE', 'FEC', 'FEE', 'REP'] as const;

export async function numbers(ctx: Ctx, idArg: string, opts: NumbersFlags): Promise<void> {
  checkTableFlags(opts);
  const id = idArg.trim();
  const starts = startsOf(opts);
  if (starts.length === 0 && (opts.sucursal !== undefined || opts.terminal !== undefined)) throw new UsageError('--sucursal and --terminal go with --set');
  const r = await withBackend(ctx, async (b) => {
    const numbering = b.numbering?.();
    if (!numbering) throw new UserError('fecr emisor numbers works on a local profile: a hosted service numbers nothing, each body there carries its numeroReferencia');
    return starts.length > 0 ? numbering.set(id, starts) : numbering.list(id);
  });
  for (const s of starts) {
    const series = r.series.find((x) => x.kind === s.kind && x.sucursal === (s.sucursal ?? r.sucursal) && x.terminal === (s.terminal ?? 1));
    info(ctx, `${s.kind} (sucursal ${s.sucursal ?? r.sucursal}, terminal ${s.terminal ?? 1}): the next number is ${series?.next ?? s.next}`);
  }
  if (opts.json) return printJson(ctx, r);
  writeLine(ctx.io.stdout, render(ctx, r, opts.csv));
}

function render(ctx: Ctx, r: IssuerNumbers, csv?: boolean): string {
  const rows = r.series.map((s) => [s.kind, String(s.sucursal), String(s.terminal), s.last === null ? '-' : String(s.last), String(s.next)]);
  return renderTable(ctx, ['kind', 'sucursal', 'terminal', 'last', 'next'], rows, { csv });
}

/** `--set FE=1501 --set NC=20` (or `FE=1501,NC=20`), each at --sucursal/--terminal when given. */
function startsOf(opts: NumbersFlags): StartRequest[] {
  const sucursal = opts.sucursal === undefined ? undefined : int('--sucursal', opts.sucursal, 999);
  const terminal = opts.terminal === undefined ? undefined : int('--terminal', opts.terminal, 99_999);
  const out: StartRequest[] = [];
  for (const item of (opts.set ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '')) {
    const m = /^([A-Za-z]+)\s*=\s*(\S+)$/.exec(item);
    const kind = m?.[1]!.toUpperCase();
    if (!m || !(KINDS as readonly string[]).includes(kind!)) throw new UsageError(`--set ${item}: expected KIND=NUMBER, KIND one of ${KINDS.join(', ')} (e.g. --set FE=1501)`);
    if (out.some((s) => s.kind === kind)) throw new UsageError(`--set names ${kind} twice`);
    out.push({ kind: kind!, next: int(`--set ${kind}`, m[2]!, 9_999_999_999), ...(sucursal !== undefined ? { sucursal } : {}), ...(terminal !== undefined ? { terminal } : {}) });
  }
  return out;
}

function int(flag: string, v: string, max: number): number {
  const n = /^\d{1,10}$/.test(v.trim()) ? Number(v.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > max) throw new UsageError(`${flag}: expected a whole number from 1 to ${max}, got "${v}"`);
  return n;
}
