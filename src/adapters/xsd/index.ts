/**
 * XSD validation of v4.4 documents against the vendored official schemas (src/core/xsd names them), with two
 * backends: the `xmllint` binary (fast, batched in one process) and xmllint-wasm (in-process, no binary).
 */
import type { XsdValidator } from '../../core/xsd/types.js';
import { hasXmllintBinary, XmllintBinaryValidator } from './binary.js';
import { XmllintWasmValidator } from './wasm.js';

export * from '../../core/xsd/index.js';
export { XmllintBinaryValidator, hasXmllintBinary } from './binary.js';
export { XmllintWasmValidator } from './wasm.js';
export { parseXmllintOutput } from './output.js';
// Xerces' words for a schema error: ./xerces/index.js (imported where an error is being reported, not here, so that a
// valid document never loads it).

export interface CreateXsdValidatorOptions {
  /** 'auto' (default): the binary when it runs, else wasm. 'binary' fails when there is no binary. */
  prefer?: 'binary' | 'wasm' | 'auto';
  /** xmllint executable (binary backend); default "xmllint". */
  binary?: string;
  /** Binary backend: start xmllint from one long-lived shell (see XmllintBinaryValidator); default false. */
  persistentShell?: boolean;
}

export function createXsdValidator(options: CreateXsdValidatorOptions = {}): XsdValidator {
  const prefer = options.prefer ?? 'auto';
  const binary = options.binary ?? 'xmllint';
  if (prefer === 'wasm') return new XmllintWasmValidator();
  if (hasXmllintBinary(binary)) return new XmllintBinaryValidator({ binary, ...(options.persistentShell ? { persistentShell: true } : {}) });
  if (prefer === 'binary') throw new Error(`the xmllint binary (${binary}) is not available; install libxml2-utils or use the wasm backend`);
  return new XmllintWasmValidator();
}
