/**
 * Maps xmllint's stderr (binary or wasm build; same libxml2 message formats) back to the
 * documents of a batch. Our documents are named `doc-000001.xml`, ... so every line that
 * concerns one of them starts with its name:
 *   doc-000001.xml:1: element Clave: Schemas validity error : Element '{ns}Clave': [facet ...] ...
 *   doc-000001.xml fails to validate
 *   doc-000002.xml validates
 *   doc-000003.xml:1: parser error : Opening and ending tag mismatch: ...
 *   <source line>            (context lines of a parser error: skipped)
 *   ^
 */
import type { XsdError, XsdResult } from '../../core/xsd/types.js';

export function batchFileName(index: number): string {
  return `doc-${String(index + 1).padStart(6, '0')}.xml`;
}

const LINE_RE = /^(doc-\d{6}\.xml)(?::(\d+): ?(.*)| (validates)| (fails to validate))$/;

export interface ParsedOutput {
  results: XsdResult[];
  /** Output lines that name none of the documents (e.g. schema compilation errors). */
  other: string[];
  /** True when every document got either a status line or at least one error. */
  complete: boolean;
}

/** Makes a libxml2 message readable: drops the "element X: Schemas validity error :" prefix and `{namespace}`. */
export function cleanMessage(raw: string, namespace?: string): string {
  let msg = raw.trim();
  msg = msg.replace(/^element [^:]+: Schemas validity error : /, '');
  msg = msg.replace(/^Schemas validity error : /, '');
  msg = msg.replace(/^parser error : /, 'XML parser error: ');
  if (namespace) msg = msg.split(`{${namespace}}`).join('');
  return msg;
}

export function parseXmllintOutput(output: string, count: number, namespace?: string): ParsedOutput {
  const index = new Map<string, number>();
  for (let i = 0; i < count; i++) index.set(batchFileName(i), i);
  const errors: XsdError[][] = Array.from({ length: count }, () => []);
  const status: (boolean | undefined)[] = new Array(count).fill(undefined);
  const other: string[] = [];
  let inDocument = false;
  for (const line of output.split(/\r?\n/)) {
    const match = LINE_RE.exec(line);
    const i = match ? index.get(match[1]!) : undefined;
    if (match && i !== undefined) {
      inDocument = true;
      if (match[4]) status[i] = true;
      else if (match[5]) status[i] = false;
      else errors[i]!.push({ line: Number(match[2]), message: cleanMessage(match[3] ?? '', namespace) });
      continue;
    }
    if (line.trim() === '') continue;
    // Context lines after a parser error (source excerpt and caret) belong to the previous error.
    if (inDocument && !/^\S+:\d+: /.test(line) && !/\bfailed to compile\b/.test(line)) continue;
    inDocument = false;
    other.push(line);
  }
  let complete = true;
  const results = errors.map((errs, i): XsdResult => {
    if (status[i] === undefined && errs.length === 0) complete = false;
    if (status[i] === false && errs.length === 0) errs.push({ message: 'The document fails to validate' });
    return { valid: status[i] === true && errs.length === 0, errors: errs };
  });
  return { results, other, complete };
}
