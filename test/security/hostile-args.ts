/** Arguments written to deceive an approval card, shared by the card tests. */

/** A command whose second line a folding card hid behind the first line's comment. */
export const HIDDEN_SECOND_LINE = 'ls -la   # list files only; the rest is a comment:\ntouch pwned.txt';

/**
 * The hostile command: the hidden line with a tab, a bidi override and an ANSI escape after it,
 * `filler` characters on a line of their own, and a last line that proves the tail ran.
 */
export function hostileCommand(filler = 5000): string {
  return [
    `${HIDDEN_SECOND_LINE}\t# \u202etxt.exe\u202c \x1b[8mhidden\x1b[0m`,
    `: ${'x'.repeat(filler)}`,
    'echo tail-ran > tail.txt',
  ].join('\n');
}

/** Characters that must never reach a card raw: bidi controls, zero-width and other invisible ones, C0 controls but the line feed. */
export const RAW_HIDDEN = /[\u202a-\u202e\u2066-\u2069\u200b-\u200f\u2028\u2029\ufeff\x00-\x09\x0b-\x1f\x7f]/u;
