// The rules of the house (shared/design/REDESIGN.md), read from the code with the TypeScript compiler: every
// import and re-export (static or import()) of every file under src/, resolved to a file. A broken rule names the
// file and the import.
import { readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { moduleSpecifiers } from './helpers/imports.js';

const ROOT = resolve(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return files(p);
    return p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
  });
}

interface Import {
  from: string; // src-relative file
  to: string; // src-relative file, or a package name
  text: string; // the specifier as written
}


const IMPORTS: Import[] = files(SRC).flatMap((file) =>
  moduleSpecifiers(file).map((text) => {
    const from = relative(SRC, file);
    if (!text.startsWith('.')) return { from, to: text, text };
    const target = resolve(dirname(file), text).replace(/\.js$/, '.ts');
    return { from, to: relative(SRC, target), text };
  }),
);

const inRoom = (path: string, room: string) => path === room || path.startsWith(`${room}/`);

function broken(rule: (i: Import) => boolean): string[] {
  return IMPORTS.filter(rule).map((i) => `${i.from} imports ${i.text}`);
}

describe('the rules of the house', () => {
  it('reads the imports (control: the CLI program imports its commands)', () => {
    expect(IMPORTS.length).toBeGreaterThan(200);
    expect(IMPORTS.some((i) => i.from === 'cli/program.ts' && i.to.startsWith('commands/'))).toBe(true);
  });

  it('core/ imports nothing outside core/ but pure packages: no process, file, network or clock of its own', () => {
    // The fiscal and XML libraries, and of Node: crypto (hashes, signatures), url (where the schemas are) and module
    // (node-forge loaded on first use). No fs, child_process, net, os, readline, path, timers.
    const PURE = /^(decimal\.js|zod|@xmldom\/xmldom|xml-crypto|node-forge|fast-xml-parser|node:crypto|node:url|node:module)(\/|$)/;
    expect(broken((i) => inRoom(i.from, 'core') && (i.text.startsWith('.') ? !inRoom(i.to, 'core') : !PURE.test(i.to)))).toEqual([]);
  });

  it('client/ imports nothing of cli/ or commands/', () => {
    expect(broken((i) => inRoom(i.from, 'client') && (inRoom(i.to, 'cli') || inRoom(i.to, 'commands')))).toEqual([]);
  });

  it('the Hacienda client never imports the emulator', () => {
    expect(broken((i) => inRoom(i.from, 'hacienda') && !inRoom(i.from, 'hacienda/emulator') && (inRoom(i.to, 'hacienda/emulator') || inRoom(i.to, 'emulator')))).toEqual([]);
  });

  it('the emulator never imports service/ or store/', () => {
    const emulator = (p: string) => inRoom(p, 'emulator') || inRoom(p, 'hacienda/emulator');
    expect(broken((i) => emulator(i.from) && (inRoom(i.to, 'service') || inRoom(i.to, 'store')))).toEqual([]);
  });

  it('store/ knows no use case: it imports nothing of service/, server/, cli/, commands/ or client/', () => {
    expect(broken((i) => inRoom(i.from, 'store') && ['service', 'server', 'cli', 'commands', 'client'].some((r) => inRoom(i.to, r)))).toEqual([]);
  });

  it('service/ imports nothing of server/, cli/, commands/ or client/', () => {
    expect(broken((i) => inRoom(i.from, 'service') && ['server', 'cli', 'commands', 'client'].some((r) => inRoom(i.to, r)))).toEqual([]);
  });
});
