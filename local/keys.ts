/**
 * The terminal's control keys, read as keypresses instead of signals. In a terminal `npm start` puts its
 * input in raw mode, so Ctrl-C reaches it as one byte, once: as a signal it reached both `npm` and this
 * process, and `npm` forwarded its copy a moment later — on a busy machine late enough to read as a
 * second Ctrl-C. Ctrl-Z still suspends the job; its mode comes back when the job resumes.
 */

/** What a control key asks for. */
export interface KeyHandlers {
  /** Ctrl-C. */
  interrupt(): void;
  /** Ctrl-\ (quit at once, as SIGQUIT would). */
  quit(): void;
}

const CTRL_C = 0x03;
const CTRL_BACKSLASH = 0x1c;
const CTRL_Z = 0x1a;

/** Reads control keys from `input` when it is a terminal; returns false (signals apply) when it is not. */
export function readControlKeys(input: NodeJS.ReadStream, on: KeyHandlers): boolean {
  if (!input.isTTY) return false;
  input.setRawMode(true);
  input.on('data', (chunk: Buffer) => {
    for (const byte of chunk) {
      if (byte === CTRL_C) on.interrupt();
      else if (byte === CTRL_BACKSLASH) on.quit();
      else if (byte === CTRL_Z) suspend(input);
    }
  });
  process.on('SIGCONT', () => input.setRawMode(true));
  input.resume();
  return true;
}

/** Stops the whole job (this process group), as Ctrl-Z does with the terminal in its usual mode. */
function suspend(input: NodeJS.ReadStream): void {
  input.setRawMode(false);
  process.kill(0, 'SIGTSTP');
}
