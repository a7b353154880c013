// Every command's --help ends with an Examples section (issue 13), written in ONE map (src/cli/examples.ts) and
// applied by buildProgram. This walks the whole command tree, groups and the root included, so a command added
// without examples fails here; and it parses every example against the same tree: each line starts with "fecr ",
// names a real command path of (or below) the command it documents, uses only that command's flags (or the global
// ones) and gives it the arguments it takes.
import { PassThrough } from 'node:stream';
import type { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { profileBackend, type Ctx } from '../src/cli/context.js';
import { buildProgram } from '../src/cli/program.js';
import { runCli } from './helpers/cli.js';

function quietCtx(): Ctx {
  const io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough(), env: {}, cwd: process.cwd(), stdoutIsTTY: false, stdinIsTTY: false };
  return { io, debug: false, now: () => new Date(), randomBytes: (n) => new Uint8Array(n), backend: profileBackend };
}

const program = buildProgram(quietCtx());

/** Every command of the tree with its path ("" for the root, "emisor register", …). */
function walk(cmd: Command, path: string[] = []): Array<{ path: string[]; cmd: Command }> {
  return [{ path, cmd }, ...cmd.commands.flatMap((c) => walk(c, [...path, c.name()]))];
}
const ALL = walk(program);

/** The words of one shell command line, up to a redirection, pipe or list operator; quotes removed. */
function words(line: string): string[] {
  const out: string[] = [];
  const re = /\s*(?:'([^']*)'|"((?:[^"\\]|\\.)*)"|([^\s'"]+))/gy;
  let current: string | undefined;
  let m: RegExpExecArray | null;
  let last = 0;
  while ((m = re.exec(line)) !== null && m[0] !== '') {
    const startsWord = /^\s/.test(m[0]) || last === 0;
    last = re.lastIndex;
    const text = m[1] ?? m[2]?.replace(/\\(.)/g, '$1') ?? m[3] ?? '';
    if (m[3] !== undefined && /^(\||\|\||&&|;|<|>|>>|2>|2>&1|&)$/.test(m[3]) && startsWord) break;
    if (startsWord || current === undefined) {
      if (current !== undefined) out.push(current);
      current = text;
    } else current += text;
  }
  if (current !== undefined) out.push(current);
  return out;
}

/** Checks one example against the tree; returns what is wrong, or undefined. */
function checkExample(example: string, owner: string[]): string | undefined {
  const w = words(example);
  if (w[0] !== 'fecr') return 'does not start with "fecr "';
  let cmd: Command = program;
  const path: string[] = [];
  const positional: string[] = [];
  const seen = new Set<Option>();
  let help = false;
  const optionsOf = (c: Command): Option[] => {
    const own = [...c.options];
    for (let p = c.parent; p; p = p.parent) own.push(...p.options);
    return own;
  };
  for (let i = 1; i < w.length; i++) {
    const word = w[i]!;
    if (word.startsWith('-') && word !== '-') {
      const [flag, inline] = word.includes('=') ? [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)] : [word, undefined];
      if (flag === '--help' || flag === '-h') {
        help = true;
        continue;
      }
      const opt = optionsOf(cmd).find((o) => o.long === flag || o.short === flag);
      if (!opt) return `"${flag}" is not a flag of "${['fecr', ...path].join(' ')}"`;
      seen.add(opt);
      if (opt.required || opt.optional) {
        if (inline !== undefined) continue;
        const next = w[i + 1];
        if (next === undefined || (next.startsWith('-') && next !== '-')) {
          if (opt.required) return `"${flag}" needs a value`;
          continue;
        }
        i++;
        if (opt.variadic) while (w[i + 1] !== undefined && !w[i + 1]!.startsWith('-')) i++;
      } else if (inline !== undefined) return `"${flag}" takes no value`;
      continue;
    }
    const sub = positional.length === 0 ? cmd.commands.find((c) => c.name() === word || c.aliases().includes(word)) : undefined;
    if (sub) {
      cmd = sub;
      path.push(word);
      continue;
    }
    positional.push(word);
  }
  if (owner.some((p, i) => path[i] !== p)) return `documents "fecr ${path.join(' ')}", not a command of "fecr ${owner.join(' ')}"`;
  if (help) return undefined;
  if (cmd.commands.length > 0 && positional.length > 0) return `"${positional[0]}" is not a command of "fecr ${path.join(' ')}"`;
  const args = cmd.registeredArguments;
  const required = args.filter((a) => a.required).length;
  const max = args.some((a) => a.variadic) ? Infinity : args.length;
  if (cmd.commands.length === 0 && positional.length < required) return `"fecr ${path.join(' ')}" needs ${required} argument(s), the example gives ${positional.length}`;
  if (positional.length > max) return `"fecr ${path.join(' ')}" takes at most ${max} argument(s), the example gives ${positional.length}`;
  for (const [i, a] of args.entries()) {
    const choices = (a as unknown as { argChoices?: string[] }).argChoices;
    if (choices && positional[i] !== undefined && !choices.includes(positional[i]!)) return `"${positional[i]}" is not one of ${choices.join(', ')}`;
  }
  const missing = optionsOf(cmd).filter((o) => o.mandatory && !seen.has(o));
  if (missing.length > 0) return `misses the required ${missing.map((o) => o.long).join(', ')}`;
  return undefined;
}

/**
 * The Examples section of a help text: [command line, comment] pairs. A comment is beside its command
 * (`  fecr …  # comment`) or on the line above it (`  # comment`, then `  fecr …`).
 */
function examplesOf(help: string): Array<[string, string]> | undefined {
  const at = help.indexOf('\nExamples:\n');
  if (at < 0) return undefined;
  const lines = help.slice(at + '\nExamples:\n'.length).split('\n');
  const out: Array<[string, string]> = [];
  let above: string | undefined;
  for (const line of lines) {
    const comment = /^ {2}# (.*)$/.exec(line);
    if (comment) {
      above = comment[1]!;
      continue;
    }
    const m = /^ {2}(\S.*?)(?: {2,}# (.*))?$/.exec(line);
    if (!m) break;
    out.push([m[1]!, m[2] ?? above ?? '']);
    above = undefined;
  }
  return out;
}

describe('--help of every command has an Examples section (src/cli/examples.ts)', () => {
  it('the tree is the whole CLI (groups and root included)', () => {
    expect(ALL.length).toBeGreaterThan(45);
  });

  it.each(ALL.map(({ path }) => [path.join(' ') || '(root)', path]))('fecr %s --help', async (_, path) => {
    const r = await runCli([...path, '--help']);
    expect(r.code, r.stderr).toBe(0);
    const examples = examplesOf(r.stdout);
    expect(examples, `no "Examples:" section in:\n${r.stdout}`).toBeDefined();
    expect(examples!.length).toBeGreaterThan(0);
    for (const [line, comment] of examples!) {
      expect(checkExample(line, path), line).toBeUndefined();
      expect(comment.trim(), `${line}: no comment`).not.toBe('');
    }
  });

  it('the map names only real commands, and every entry reaches a command', async () => {
    const { EXAMPLES } = await import('../src/cli/examples.js');
    const paths = new Set(ALL.map(({ path }) => path.join(' ')));
    expect(Object.keys(EXAMPLES).filter((k) => !paths.has(k))).toEqual([]);
    expect([...paths].filter((p) => !(p in EXAMPLES))).toEqual([]);
  });

  it('the checker itself rejects what it should', () => {
    expect(checkExample('fecr send body.json --wait', ['send'])).toBeUndefined();
    expect(checkExample('fecr --profile demo send body.json', ['send'])).toBeUndefined();
    expect(checkExample('fecr send - < body.json', ['send'])).toBeUndefined();
    expect(checkExample("fecr cabys 'cafe molido' --json", ['cabys'])).toBeUndefined();
    expect(checkExample('npx fecr send body.json', ['send'])).toMatch(/start with/);
    expect(checkExample('fecr sendd body.json', [])).toMatch(/not a command/);
    expect(checkExample('fecr send body.json --wiat', ['send'])).toMatch(/--wiat/);
    expect(checkExample('fecr send', ['send'])).toMatch(/needs 1 argument/);
    expect(checkExample('fecr status CLAVE extra', ['status'])).toMatch(/at most 1/);
    expect(checkExample('fecr certs create-test --id 1 --type 02 --pin 1', ['certs', 'create-test'])).toMatch(/--out/);
    expect(checkExample('fecr emisor show 3101123456', ['send'])).toMatch(/not a command of/);
    expect(checkExample('fecr emisor frobnicate', ['emisor'])).toMatch(/not a command of "fecr emisor"/);
  });
});
