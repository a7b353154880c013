/** A small spinner on stderr, only when stderr is a terminal (nothing otherwise). */
import type { Ctx } from '../../cli/context.js';

export interface Spinner {
  text(t: string): void;
  stop(): void;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export function startSpinner(ctx: Ctx, initial: string): Spinner {
  const stderr = ctx.io.stderr as NodeJS.WritableStream & { isTTY?: boolean };
  if (!stderr.isTTY) return { text() {}, stop() {} };
  let text = initial;
  let i = 0;
  const started = Date.now();
  const draw = () => {
    const secs = Math.floor((Date.now() - started) / 1000);
    stderr.write(`\r\x1b[2K${FRAMES[i++ % FRAMES.length]} ${text}${secs > 0 ? ` (${secs} s)` : ''}`);
  };
  draw();
  const timer = setInterval(draw, 80);
  return {
    text(t) {
      text = t;
    },
    stop() {
      clearInterval(timer);
      stderr.write('\r\x1b[2K');
    },
  };
}
