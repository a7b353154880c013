/**
 * An input value as a message may echo it. A finding that quotes what it refuses helps, but a value can be
 * megabytes long (a CSV cell, a JSON key or string): the first ECHO_MAX characters are shown, then an ellipsis and
 * the value's length, e.g. `aaaa…aaaa… (31457280 characters)`. Every finding, error line and result file that
 * quotes an input value goes through `echo`.
 */

/** The most characters of an input value a message quotes. */
export const ECHO_MAX = 80;

/** `value` when at most `max` characters long, else its first `max` characters, `…` and its length. */
export function echo(value: string, max = ECHO_MAX): string {
  if (value.length <= max) return value;
  let head = value.slice(0, max);
  // Never half of a surrogate pair.
  if (/[\uD800-\uDBFF]$/.test(head)) head = head.slice(0, -1);
  return `${head}… (${value.length} characters)`;
}

/**
 * A message from elsewhere (a validator, a parser) that may quote input values: every run between single or
 * double quotes longer than `max` characters is cut as `echo` cuts it.
 */
export function echoQuoted(message: string, max = ECHO_MAX): string {
  return message.replace(new RegExp(`'([^']{${max + 1},})'|"([^"]{${max + 1},})"`, 'g'), (_m, single: string | undefined, double: string | undefined) =>
    single !== undefined ? `'${echo(single, max)}'` : `"${echo(double!, max)}"`,
  );
}
