import type { SchemaName } from '../xml/kinds.js';

export interface XsdError {
  /** Line in the validated document, when xmllint gives one (our canonical documents are one line). */
  line?: number;
  message: string;
}

export interface XsdResult {
  valid: boolean;
  errors: XsdError[];
}

export type XsdBackend = 'binary' | 'wasm';

export interface XsdValidator {
  readonly backend: XsdBackend;
  /**
   * Validates one or many documents against one schema; one result per document, in order.
   * Many documents are validated in one xmllint run (binary) or one WebAssembly call (wasm).
   * Rejects only when validation could not run (schema does not compile, xmllint crashed).
   */
  validate(xml: string | string[], kind: SchemaName): Promise<XsdResult[]>;
  /** Releases what the validator keeps between calls (e.g. a helper process), when it keeps anything. */
  close?(): Promise<void>;
}
