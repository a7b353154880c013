/** `fecr recibidos …`: the buyer's side (issue 16): suppliers' comprobantes imported, checked, answered and summed. */
import { Option, type Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import type { DecideFlags, ImportFlags, ListFlags, ShowFlags, SummaryFlags } from './shared.js';

export function defineRecibidosCommands(program: Command, ctx: Ctx): void {
  const r = program.command('recibidos').description("suppliers' comprobantes: import and check them, answer Hacienda (MensajeReceptor), sum the IVA");
  r.command('import')
    .description('check and store supplier XML files: a file, every *.xml of a folder, or - (stdin); idempotent')
    .argument('<source>', 'FILE.xml, a folder, or - for stdin')
    .option('--json', 'print the results as JSON')
    .action(async (source: string, opts: ImportFlags) => (await import('./import.js')).run(ctx, source, opts));
  r.command('watch')
    .description("read suppliers' mails (a Maildir or an IMAP mailbox): import each XML comprobante as import does, answer it as --rules says, move the mail out of the inbox once done (a mail without a valid comprobante: set aside with its reason)")
    .option('--maildir <dir>', 'a Maildir (its new/ and cur/); mails go to its .fecr-imported and .fecr-set-aside subfolders')
    .option('--imap <url>', 'imaps://USER@HOST[:PORT]/MAILBOX (password: FECR_IMAP_PASSWORD); mails go to the folders fecr-imported and fecr-set-aside')
    .option('--rules <file>', 'per supplier: hold (the default) or accept [with a condicionImpuesto]: {"default":"hold","suppliers":{"3101987654":"accept","4000001021":{"action":"accept","condicionImpuesto":"04"}}}')
    .option('--once', 'one pass over the waiting mails, then exit')
    .option('--interval <seconds>', 'seconds between passes (default 60)')
    .option('--json', 'one JSON line per mail')
    .action(async (opts: import('./watch.js').WatchFlags) => (await import('./watch.js')).run(ctx, opts));
  r.command('list')
    .description('received comprobantes, newest first')
    // The flags of `fecr documents list`; the first names (--estado, --desde, --emisor) still work, unlisted.
    .option('--state <state>', 'only this state: invalido, pendiente, aceptado, parcial or rechazado')
    .option('--since <date>', 'only those issued on or after this date (YYYY-MM-DD)')
    .option('--issuer <identificacion>', "only this supplier's (its identificación)")
    .option('--due', 'only those not answered yet, oldest first, with their age in days; warns near the term (profile keys recibidosPlazoDias, recibidosAvisoDias)')
    .addOption(new Option('--estado <estado>').hideHelp())
    .addOption(new Option('--desde <date>').hideHelp())
    .addOption(new Option('--emisor <identificacion>').hideHelp())
    .option('--json', 'print as JSON')
    .option('--csv', 'print as CSV (RFC 4180; formulas neutralised)')
    .action(async (opts: ListFlags) => (await import('./list.js')).run(ctx, opts));
  r.command('show')
    .description('one received comprobante: its checks, IVA by tarifa, our answer and its state at Hacienda')
    .argument('<clave>', 'the 50-digit clave')
    .option('--json', 'print as JSON')
    .option('--csv', 'print the fields as CSV (RFC 4180; formulas neutralised)')
    .action(async (clave: string, opts: ShowFlags) => (await import('./show.js')).run(ctx, clave, opts));
  const decide = (verb: 'aceptar' | 'parcial' | 'rechazar', description: string, load: () => Promise<{ run: (ctx: Ctx, clave: string, f: DecideFlags) => Promise<void> }>) =>
    r
      .command(verb)
      .description(description)
      .argument('<clave>', 'the 50-digit clave')
      .option('--detalle <text>', 'DetalleMensaje (5-160 characters; a default for parcial and rechazar)')
      .option('--condicion-impuesto <code>', 'CondicionImpuesto 01..05 (Nota 18; default 01 aceptar, 02 parcial)')
      .option('--iva-acreditable <amount>', 'MontoTotalImpuestoAcreditar (default: all the IVA for aceptar and parcial)')
      .option('--gasto-aplicable <amount>', 'MontoTotalDeGastoAplicable (default: TotalComprobante minus the IVA credited)')
      .option('--timeout <seconds>', "how long to wait for Hacienda's verdict on the answer (default 60; 0: do not wait)")
      .option('--force', 'answer even though Hacienda has no record of the comprobante (its MensajeReceptor will likely be rejected)')
      .option('--json', 'print as JSON')
      .action(async (clave: string, opts: DecideFlags) => (await load()).run(ctx, clave, opts));
  decide('aceptar', 'accept it: MensajeReceptor 1 (consecutivo tipo 05), all the IVA creditable by default', () => import('./aceptar.js'));
  decide('parcial', 'accept it partially: MensajeReceptor 2 (tipo 06)', () => import('./parcial.js'));
  decide('rechazar', 'reject it: MensajeReceptor 3 (tipo 07)', () => import('./rechazar.js'));
  r.command('resumen')
    .description("a month: IVA acreditable and gasto aplicable by tarifa (what the IVA return needs), over the documents whose MensajeReceptor Hacienda accepted; the others listed apart with why")
    .argument('<mes>', 'YYYY-MM')
    .option('--issuer <identificacion>', "only this issuer's purchases (the buyer; default: one section per issuer of the profile, never a sum across them)")
    .option('--json', 'print as JSON (without --issuer: an array, one object per issuer)')
    .option('--csv', 'print the table as CSV (RFC 4180; formulas neutralised; without --issuer: emisor its first column)')
    .action(async (mes: string, opts: SummaryFlags) => (await import('./resumen.js')).run(ctx, mes, opts));
}
