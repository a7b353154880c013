/**
 * The fecr command tree. Command modules are thin and light to import; each loads its heavy
 * dependencies inside its action, so `fecr --help` and `fecr --version` stay fast.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { packageUrl } from '../core/package-root.js';
import { Command, CommanderError } from 'commander';
import { defineAccountCommands } from '../commands/accounts/index.js';
import { defineBatchCommand } from '../commands/batch/index.js';
import { defineCertsCommands } from '../commands/certs/index.js';
import { defineCompletionCommand } from '../commands/completion/index.js';
import { defineDemoCommand } from '../commands/demo/index.js';
import { defineDocumentCommands } from '../commands/document/index.js';
import { defineDoctorCommand } from '../commands/doctor/index.js';
import { defineHaciendaCommands } from '../commands/hacienda/index.js';
import { defineInitCommand } from '../commands/init/index.js';
import { defineServeCommand } from '../commands/serve/index.js';
import { defineWebhookCommands } from '../commands/webhooks/index.js';
import { defineRecibidosCommands } from '../commands/recibidos/index.js';
import { defineArchiveCommands } from '../commands/archive/index.js';
import { defineReportCommands } from '../commands/report/index.js';
import { defineContingencyCommands } from '../commands/contingency/index.js';
import { defineConfigCommands } from '../commands/config/index.js';
import { defineLoginCommands } from '../commands/login/index.js';
import { defineDocumentsCommands } from '../commands/documents/index.js';
import { defineDownloadCommand } from '../commands/download/index.js';
import { defineEmisorCommands } from '../commands/emisor/index.js';
import { defineLookupCommands } from '../commands/lookups/index.js';
import { defineSendCommand } from '../commands/send/index.js';
import { defineStatusCommand } from '../commands/status/index.js';
import { defineTestCommand } from '../commands/test/index.js';
import { profileBackend, type BackendFactory, type Ctx } from './context.js';
import { CLIENT_EXIT, EXIT, EXIT_CODE_HELP, SilentExit, UsageError, UserError } from './errors.js';
import { examplesHelp } from './examples.js';
import { processIO, writeLine, type IO } from './io.js';
import { safeBlock, safeText } from './safe-text.js';

const requireHere = createRequire(import.meta.url);

export function version(): string {
  const pkg = JSON.parse(readFileSync(packageUrl('package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

export interface MainOptions {
  io?: IO;
  now?: () => Date;
  randomBytes?: (n: number) => Uint8Array;
  /** The backend the issuer verbs use (default: the profile's, profileBackend; see Ctx.backend). */
  backend?: BackendFactory;
}

/** Runs the CLI and returns the exit code (never calls process.exit). */
export async function main(argv: string[], opts: MainOptions = {}): Promise<number> {
  const io = opts.io ?? processIO();
  const ctx: Ctx = {
    io,
    debug: argv.includes('--debug'),
    now: opts.now ?? (() => new Date()),
    // node:crypto takes ≈ 6 ms to load: only commands that draw random bytes pay for it.
    randomBytes: opts.randomBytes ?? ((n) => (requireHere('node:crypto') as typeof import('node:crypto')).randomBytes(n)),
    backend: opts.backend ?? profileBackend,
  };
  const program = buildProgram(ctx);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (e) {
    return await report(ctx, e);
  }
}

export function buildProgram(ctx: Ctx): Command {
  const program = new Command('fecr');
  program
    .description('Costa Rica electronic invoicing (comprobantes electrónicos v4.4)')
    .version(version(), '-V, --version')
    .option('--debug', 'show internal details of failures')
    .option('--profile <name>', 'profile to use (default FECR_PROFILE, else "default"); see fecr config')
    // The global flag, on the context every command receives (src/client/select.ts reads it).
    .hook('preAction', (cmd) => {
      const profile = cmd.opts().profile as string | undefined;
      if (profile !== undefined) ctx.profile = profile;
    })
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      writeOut: (s) => ctx.io.stdout.write(s),
      writeErr: (s) => ctx.io.stderr.write(s),
      // A misuse quotes what was typed (an argument may be a file name): through the sanitiser, its lines kept.
      outputError: (s, write) => write(safeBlock(s.replace(/^error: /, 'usage: '))),
    })
    .exitOverride();
  program.addHelpText('after', '\nRun "fecr help exit-codes" for the exit codes.');
  defineDocumentCommands(program, ctx);
  defineCertsCommands(program, ctx);
  defineInitCommand(program, ctx);
  defineDemoCommand(program, ctx);
  defineHaciendaCommands(program, ctx);
  defineServeCommand(program, ctx);
  defineAccountCommands(program, ctx);
  defineWebhookCommands(program, ctx);
  defineRecibidosCommands(program, ctx);
  defineArchiveCommands(program, ctx);
  defineReportCommands(program, ctx);
  defineContingencyCommands(program, ctx);
  defineConfigCommands(program, ctx);
  defineLoginCommands(program, ctx);
  defineEmisorCommands(program, ctx);
  defineSendCommand(program, ctx);
  defineBatchCommand(program, ctx);
  defineTestCommand(program, ctx);
  defineStatusCommand(program, ctx);
  defineDownloadCommand(program, ctx);
  defineDocumentsCommands(program, ctx);
  defineLookupCommands(program, ctx);
  defineDoctorCommand(program, ctx);
  defineCompletionCommand(program, ctx);
  program.helpCommand(false);
  program
    .command('help [command...]')
    .description('show help for a command, or "exit-codes"')
    .action((words: string[] = []) => {
      if (words[0] === 'exit-codes') return writeLine(ctx.io.stdout, EXIT_CODE_HELP);
      let target: Command = program;
      for (const w of words) {
        const next = target.commands.find((c) => c.name() === w || c.aliases().includes(w));
        if (!next) throw new UsageError(`unknown command "${words.join(' ')}"`);
        target = next;
      }
      target.outputHelp();
    });
  // Every command's help ends with its examples (src/cli/examples.ts; test/cli-help.test.ts checks them all),
  // formatted only when a help is shown: one hook for the whole tree. (The output and exit settings above reach
  // every subcommand too: commander copies them into each command `.command()` creates.)
  program.addHelpText('afterAll', ({ command }) => examplesHelp(commandPath(command)) ?? '');
  return program;
}

/** "emisor register" for `fecr emisor register`, "" for fecr itself. */
function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

async function report(ctx: Ctx, e: unknown): Promise<number> {
  if (e instanceof CommanderError) {
    if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return EXIT.ok;
    return EXIT.usage; // commander already printed the message
  }
  if (e instanceof SilentExit) return e.exitCode;
  if (e instanceof UserError) {
    writeLine(ctx.io.stderr, `error: ${safeText(e.message)}`);
    if (ctx.debug && e.cause) writeLine(ctx.io.stderr, safeBlock(String((e.cause as Error).stack ?? e.cause)));
    return e.exitCode;
  }
  // The client's own failures (profiles, config file, sessions): its code says the exit code.
  const { ClientError } = await import('../client/errors.js');
  if (e instanceof ClientError) {
    writeLine(ctx.io.stderr, e.bare ? safeText(e.message) : `error: ${safeText(e.message)}`);
    if (ctx.debug && e.cause) writeLine(ctx.io.stderr, safeBlock(String((e.cause as Error).stack ?? e.cause)));
    return CLIENT_EXIT[e.code];
  }
  // A full disk or a lost database connection: one line that says nothing was lost (src/store/faults.ts).
  const { isStoreFault } = await import('../store/faults.js');
  if (isStoreFault(e)) {
    writeLine(ctx.io.stderr, `error: ${safeText(e.message)}`);
    if (ctx.debug) writeLine(ctx.io.stderr, safeBlock(String((e.cause as Error | undefined)?.stack ?? e.stack)));
    return EXIT.error;
  }
  const err = e as Error;
  writeLine(ctx.io.stderr, `error: internal error: ${safeBlock(err?.message ?? String(e))}${ctx.debug ? '' : ' (run with --debug for details)'}`);
  if (ctx.debug) writeLine(ctx.io.stderr, safeBlock(String(err?.stack ?? e)));
  return EXIT.error;
}
