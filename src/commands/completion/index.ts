/** `fecr completion bash|zsh|fish`: a shell completion script generated from this command tree (run.ts). */
import { Argument, type Command } from 'commander';
import type { Ctx } from '../../cli/context.js';
import type { Shell } from './run.js';

const SHELLS = ['bash', 'zsh', 'fish'] as const satisfies readonly Shell[];

export function defineCompletionCommand(program: Command, ctx: Ctx): void {
  program
    .command('completion')
    .description('print a completion script for bash, zsh or fish (commands, subcommands and flags)')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(SHELLS))
    .addHelpText(
      'after',
      '\nThe script is static (it does not run fecr at each TAB): make it again after upgrading fecr.' +
        '\nbash: save it in ~/.local/share/bash-completion/completions/fecr, or add `source <(fecr completion bash)` to ~/.bashrc.' +
        '\nzsh: save it as _fecr in a directory of your fpath (before compinit runs), or `source <(fecr completion zsh)` after compinit.' +
        '\nfish: save it as ~/.config/fish/completions/fecr.fish.',
    )
    .action(async (shell: Shell) => (await import('./run.js')).run(ctx, shell, program));
}
