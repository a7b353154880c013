import { writeFile } from 'node:fs/promises';
import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { resolvePath } from '../../cli/io.js';
import { info } from '../../cli/output.js';

export async function run(ctx: Ctx, opts: { id: string; type: string; pin: string; out: string; name?: string; days: string }): Promise<void> {
  const type = opts.type.padStart(2, '0');
  if (!['01', '02', '03', '04'].includes(type)) throw new UsageError('--type must be 01, 02, 03 or 04');
  const days = Number(opts.days);
  if (!Number.isInteger(days) || days < 1) throw new UsageError('--days must be a positive whole number');
  const { TIPOS_IDENTIFICACION } = await import('../../core/codes.js');
  const rule = TIPOS_IDENTIFICACION[type]!;
  if (!rule.pattern.test(opts.id)) throw new UsageError(`--id must be ${rule.rule} for type ${type}`);
  const { createTestP12 } = await import('../../core/sign/testcert.js');
  const now = ctx.now();
  const p12 = createTestP12({
    id: opts.id,
    type: type as '01' | '02' | '03' | '04',
    pin: opts.pin,
    name: opts.name,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + days * 86_400_000),
  });
  try {
    await writeFile(resolvePath(ctx.io, opts.out), p12, { mode: 0o600 });
  } catch (e) {
    throw new UserError(`${opts.out}: cannot write (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  info(ctx, `wrote ${opts.out} (test certificate for ${opts.id}, valid ${days} days)`);
}
