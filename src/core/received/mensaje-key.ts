/**
 * Hacienda keys a MensajeReceptor by `<clave>-<consecutivoReceptor>` (NOTES §4.3: the POST carries the confirmed
 * document's clave and `consecutivoReceptor`; GET recepción/{key} answers it). fecr stores a MensajeReceptor's
 * documents row under that key.
 */
export function mensajeReceptorKey(key: string): { clave: string; consecutivoReceptor: string } | null {
  const m = /^([A-Za-z0-9]{50})-(\d{20})$/.exec(key);
  return m ? { clave: m[1]!, consecutivoReceptor: m[2]! } : null;
}
