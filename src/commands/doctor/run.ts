import type { Ctx } from '../../cli/context.js';
import { EXIT, SilentExit } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { info, printJson, useColor } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';
import type { CheckStatus, DoctorCheck } from '../../client/doctor.js';

export interface DoctorFlags {
  json?: boolean;
}

const COLOR: Record<CheckStatus, string> = { ok: '32', warn: '33', fail: '31', skip: '2' };

/** One check as a line: `fail  credentials 3101123456: claveHacienda is …; fix: put …`, through the sanitiser. */
export function checkLine(c: DoctorCheck, color = false): string {
  const word = c.status.padEnd(4);
  const status = color ? `\u001b[${COLOR[c.status]}m${word}\u001b[0m` : word;
  return `${status}  ${safeText(`${c.check}: ${c.message}${c.fix ? `; fix: ${c.fix}` : ''}`)}`;
}

export async function run(ctx: Ctx, opts: DoctorFlags): Promise<void> {
  const { runDoctor } = await import('../../client/doctor.js');
  const report = await runDoctor(ctx);
  if (opts.json) printJson(ctx, report);
  else {
    const color = useColor(ctx, 'stdout');
    for (const c of report.checks) writeLine(ctx.io.stdout, checkLine(c, color));
  }
  const failed = report.checks.filter((c) => c.status === 'fail').length;
  const warned = report.checks.filter((c) => c.status === 'warn').length;
  if (failed > 0) {
    info(ctx, `error: ${failed} of ${report.checks.length} checks of profile "${safeText(report.profile)}" failed`);
    throw new SilentExit(EXIT.error);
  }
  if (!opts.json) info(ctx, `profile "${safeText(report.profile)}": every check holds${warned ? ` (${warned} warning${warned === 1 ? '' : 's'})` : ''}`);
}
