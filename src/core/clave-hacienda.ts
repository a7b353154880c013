/**
 * The issuer's claveHacienda (its password at Hacienda's IdP) as the spec's body carries it: base64 (SERVICE-SPEC).
 * Pure, in core, so the worker, the buyer's side and the doctor read it alike without importing one another. A value
 * that is not canonical base64 of UTF-8 text is used as is.
 */
export function decodeClaveHacienda(value: string): string {
  const t = value.trim();
  if (t.length > 0 && t.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(t)) {
    const bytes = Buffer.from(t, 'base64');
    const text = bytes.toString('utf8');
    if (bytes.toString('base64') === t && Buffer.from(text, 'utf8').equals(bytes) && !/[\u0000-\u001f\u007f]/.test(text)) return text;
  }
  return value;
}
