/**
 * Money and quantity arithmetic. Every amount in fecr is a Decimal, never a JS float.
 * Hacienda's DecimalDineroType: 18 digits, 5 decimals, rounded half-up on the 6th decimal (ANEXOS p.12-14).
 */
import { Decimal as DecimalJs } from 'decimal.js';

export const Decimal = DecimalJs.clone({ precision: 50, rounding: DecimalJs.ROUND_HALF_UP, toExpNeg: -30, toExpPos: 40 });
export type Decimal = InstanceType<typeof Decimal>;

export const ZERO = new Decimal(0);
export const HUNDRED = new Decimal(100);

/** Parses a decimal string or a finite number (numbers go through their shortest string form). */
export function dec(value: string | number | Decimal): Decimal {
  if (value instanceof Decimal) return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`);
    return new Decimal(String(value));
  }
  return new Decimal(value.trim());
}

/** True when the string is a plain decimal number (optionally signed, no exponent, no thousands separator). */
export function isDecimalString(value: string): boolean {
  return /^-?\d+(\.\d+)?$/.test(value.trim());
}

/** Rounds half-up to `places` decimals (5 for money). */
export function round(value: Decimal, places = 5): Decimal {
  return value.toDecimalPlaces(places, Decimal.ROUND_HALF_UP);
}

/** Formats money for XML: exactly 5 decimals, half-up, no exponent. */
export function money(value: Decimal): string {
  return value.toFixed(5, Decimal.ROUND_HALF_UP);
}

/** Formats with at most `places` decimals and no trailing zeros (quantities, rates: "13", "0.5", "2.125"). */
export function plain(value: Decimal, places: number): string {
  return round(value, places).toFixed();
}

export function sum(values: Iterable<Decimal>): Decimal {
  let total = ZERO;
  for (const v of values) total = total.plus(v);
  return total;
}
