/** What the `fecr emisor` verbs share: their flags, the ambiente for people. */
export interface EmisorFlags {
  p12?: string;
  pinStdin?: boolean;
  json?: boolean;
  /** show, list: the table as CSV */
  csv?: boolean;
}

export function ambienteName(a: number): string {
  return a === 1 ? '1 production' : a === 2 ? '2 testing' : String(a);
}
