// `fecr completion bash|zsh|fish` (issue 13): a completion script generated from the commander tree. The bash
// script is sourced in a real bash and its completion function called with COMP_WORDS/COMP_CWORD as bash sets them
// on TAB; zsh and fish scripts are syntax-checked (and fish's completions asked for with `complete -C`) when those
// shells are installed.
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from './helpers/cli.js';

const has = (shell: string) => spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;
const dir = tempDir('fecr-completion-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function script(shell: string): Promise<string> {
  const r = await runCli(['completion', shell]);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toBe('');
  const file = join(dir, `fecr.${shell}`);
  writeFileSync(file, r.stdout);
  return file;
}

describe('fecr completion bash', () => {
  let file = '';
  beforeAll(async () => {
    file = await script('bash');
  });

  /** What bash would offer after typing `line` (the cursor at its end) and TAB. */
  function complete(line: string): string[] {
    const words = line.split(' ');
    const code = [
      `source ${JSON.stringify(file)}`,
      // The function `complete -p fecr` names, as bash would call it.
      `fn=$(complete -p fecr | sed -E 's/.* -F ([^ ]+) .*/\\1/')`,
      `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')})`,
      `COMP_CWORD=${words.length - 1}`,
      `COMP_LINE='${line}'`,
      `COMP_POINT=${line.length}`,
      `"$fn" fecr '${words.at(-1)}' '${words.at(-2) ?? ''}'`,
      `printf '%s\\n' "\${COMPREPLY[@]}"`,
    ].join('\n');
    const r = spawnSync('bash', ['--norc', '--noprofile', '-c', code], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    return r.stdout.split('\n').filter((l) => l !== '');
  }

  it('registers a completion for fecr', () => {
    const r = spawnSync('bash', ['--norc', '--noprofile', '-c', `source ${JSON.stringify(file)} && complete -p fecr`], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/-F \S+ fecr/);
  });

  it('fecr sen → send', () => {
    expect(complete('fecr sen')).toEqual(['send']);
  });

  it('fecr emisor → its verbs', () => {
    const verbs = complete('fecr emisor ');
    expect(verbs).toEqual(expect.arrayContaining(['register', 'update', 'show']));
    expect(verbs).not.toContain('send');
    expect(complete('fecr emisor re')).toEqual(['register']);
  });

  it('top level: every command; global flags before a command are skipped with their values', () => {
    const top = complete('fecr ');
    expect(top).toEqual(expect.arrayContaining(['send', 'batch', 'emisor', 'cabys', 'completion', 'help']));
    expect(complete('fecr --profile demo emi')).toEqual(['emisor']);
    expect(complete('fecr --debug sen')).toEqual(['send']);
  });

  it("flags of the command being typed (its own and the global ones), option values skipped", () => {
    expect(complete('fecr send --wa')).toEqual(['--wait']);
    expect(complete('fecr send body.json --')).toEqual(expect.arrayContaining(['--wait', '--timeout', '--strict', '--json', '--profile', '--debug', '--help']));
    expect(complete('fecr emisor register --p')).toEqual(expect.arrayContaining(['--p12', '--pin-stdin', '--profile']));
    expect(complete('fecr batch --concurrency 4 --dry')).toEqual(['--dry-run']);
    // The value of a flag that takes one: files (bash's default), not the command's words.
    expect(complete('fecr emisor register --p12 ')).toEqual([]);
  });

  it('arguments with fixed choices, and files elsewhere (empty reply: bash falls back to file names)', () => {
    expect(complete('fecr completion ')).toEqual(['bash', 'zsh', 'fish']);
    expect(complete('fecr completion z')).toEqual(['zsh']);
    expect(complete('fecr send ')).toEqual([]);
    expect(spawnSync('bash', ['-c', `source ${JSON.stringify(file)} && complete -p fecr`], { encoding: 'utf8' }).stdout).toMatch(/-o default/);
  });
});

describe('fecr completion zsh', () => {
  it.skipIf(!has('zsh'))('is valid zsh (zsh -n) and defines its completion function under compinit', async () => {
    const file = await script('zsh');
    expect(readHead(file)).toMatch(/^#compdef fecr/);
    const n = spawnSync('zsh', ['-n', file], { encoding: 'utf8' });
    expect(n.status, n.stderr).toBe(0);
    const r = spawnSync('zsh', ['-f', '-c', `autoload -Uz compinit && compinit -u -D && source ${JSON.stringify(file)} && print -r -- $_comps[fecr]`], {
      encoding: 'utf8',
      env: { ...process.env, HOME: dir },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('_fecr');
  });

  it.skipIf(!has('zsh'))('offers commands, verbs, flags and choices (zsh completion builtins stubbed, filtering by the word typed)', async () => {
    const file = await script('zsh');
    const code = [
      'compdef() { :; }',
      // What the script hands to zsh: _describe gets "word:description" items, compadd words, _files means files.
      '_describe() { local n=${@[-1]}; local -a xs; xs=("${(@)${(P)n}%%:*}"); print -rl -- ${(M)xs:#${PREFIX}*}; }',
      'compadd() { local n=${@[-1]}; local -a xs; xs=("${(@P)n}"); print -rl -- ${(M)xs:#${PREFIX}*}; }',
      '_files() { print -r -- FILES; }',
      `source ${JSON.stringify(file)}`,
      't() { words=("$@"); CURRENT=$#words; PREFIX=${words[CURRENT]}; print -r -- "[$*]" $(_fecr); }',
      't fecr sen',
      "t fecr emisor ''",
      't fecr --profile demo emi',
      't fecr send --wa',
      "t fecr emisor register --p12 ''",
      "t fecr completion ''",
      "t fecr send ''",
    ].join('\n');
    const r = spawnSync('zsh', ['-f', '-c', code], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const got = Object.fromEntries(r.stdout.trim().split('\n').map((l) => [l.slice(1, l.indexOf(']')), l.slice(l.indexOf(']') + 1).trim().split(' ')]));
    expect(got['fecr sen']).toEqual(['send']);
    expect(got['fecr emisor ']).toEqual(expect.arrayContaining(['register', 'update', 'show']));
    expect(got['fecr emisor ']).not.toContain('send');
    expect(got['fecr --profile demo emi']).toEqual(['emisor']);
    expect(got['fecr send --wa']).toEqual(['--wait']);
    expect(got['fecr emisor register --p12 ']).toEqual(['FILES']);
    expect(got['fecr completion ']).toEqual(['bash', 'zsh', 'fish']);
    expect(got['fecr send ']).toEqual(['FILES']);
  });
  it.skipIf(has('zsh'))('skipped: zsh is not installed on this machine', () => undefined);
});

describe('fecr completion fish', () => {
  it.skipIf(!has('fish'))('is valid fish (fish -n), and `complete -C` offers commands, verbs and flags', async () => {
    const file = await script('fish');
    const n = spawnSync('fish', ['-n', file], { encoding: 'utf8' });
    expect(n.status, n.stderr).toBe(0);
    const ask = (line: string) => {
      const r = spawnSync('fish', ['--no-config', '-c', `source ${JSON.stringify(file)}; complete -C ${JSON.stringify(line)}`], { encoding: 'utf8', env: { ...process.env, HOME: dir } });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => l.split('\t')[0]!);
    };
    expect(ask('fecr sen')).toEqual(['send']);
    expect(ask('fecr emisor ')).toEqual(expect.arrayContaining(['register', 'update', 'show']));
    expect(ask('fecr emisor ')).not.toContain('send');
    expect(ask('fecr --profile demo emi')).toEqual(['emisor']);
    expect(ask('fecr send --wa')).toEqual(['--wait']);
    expect(ask('fecr completion ')).toEqual(expect.arrayContaining(['bash', 'zsh', 'fish']));
  });
  it.skipIf(has('fish'))('skipped: fish is not installed on this machine', () => undefined);
});

describe('fecr completion: usage', () => {
  it('an unknown shell or none is a usage error (exit 2)', async () => {
    expect((await runCli(['completion', 'powershell'])).code).toBe(2);
    expect((await runCli(['completion'])).code).toBe(2);
  });
});

function readHead(file: string): string {
  return spawnSync('head', ['-n', '1', file], { encoding: 'utf8' }).stdout;
}
