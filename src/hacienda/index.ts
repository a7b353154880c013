/** The tax authority, both sides: the Hacienda client and the local emulator. */
export * from './client/index.js';
export {
  startEmulator,
  createDefaultValidator,
  CODIGOS,
  type EmulatorOptions,
  type EmulatorState,
  type RunningEmulator,
  type ReceptionSummary,
  type FaultStats,
  type FaultConfig,
  type FaultPatch,
  type FaultTarget,
  type ComprobanteValidator,
  type ValidationMeta,
  type ValidationResult,
  type DefaultValidatorOptions,
} from './emulator/index.js';
export { startEmulatorThread, type EmulatorThread, type EmulatorThreadOptions } from './emulator/thread.js';
