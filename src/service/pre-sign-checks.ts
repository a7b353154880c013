/**
 * One verdict before signing (issue 36): what `fecr validate` finds that Hacienda rejects refuses a body before it is
 * signed and before a number is spent. The rules are `fecr validate`'s own, core/rules/document-checks.ts
 * (`haciendaChecks`): only its findings refuse, each a rule Hacienda's answers show as a rejection (the rules table,
 * emulator/rules.ts: -400 CABYS, -408 activity, -53 a later day); its warnings (-407, -9010, the same-day -53) never
 * do. Checked on the model the service builds anyway, so a batch of thousands parses nothing twice.
 */
import type { Comprobante, Finding } from '../core/model.js';
import { haciendaChecks } from '../core/rules/document-checks.js';
import { readCabysCodes, type CabysCodes } from '../adapters/cabys-file.js';

let cabys: CabysCodes | undefined;

/** The catalogue fecr ships (the one the emulator and `fecr validate` read), read once per process. */
function catalogue(): CabysCodes {
  cabys ??= readCabysCodes();
  return cabys;
}

/** The findings Hacienda would reject the document for, on Hacienda's clock `now`; `held`: paths not to check. */
export function rejectedByHacienda(now: Date): (doc: Comprobante, held?: readonly string[]) => Finding[] {
  return (doc, held) => {
    const codes = catalogue();
    return haciendaChecks(doc, { now, hasCabys: (c) => codes.has(c), ...(held ? { held } : {}) }).findings;
  };
}
