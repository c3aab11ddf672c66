/**
 * Prices in Markdown whose renderer reads `$…$` as a formula: a `$` before a digit is escaped
 * outside code; code, formulas and escapes already there are kept.
 */
import { describe, expect, it } from 'vitest';
import { escapePriceDollars } from '../../src/delivery/markdown-dollars.js';

const MAX = 32_768;

describe('escapePriceDollars', () => {
  it('escapes a $ before a digit, so two prices are not one formula', () => {
    expect(escapePriceDollars('between $5 and $10, or $3.50 each', MAX)).toBe(
      'between \\$5 and \\$10, or \\$3.50 each',
    );
    expect(escapePriceDollars('| item | price |\n|---|---|\n| tea | $2 |', MAX)).toBe(
      '| item | price |\n|---|---|\n| tea | \\$2 |',
    );
  });

  it('keeps code spans, fenced code, escapes and formulas as written', () => {
    expect(escapePriceDollars('run `echo $1 $2` for $5', MAX)).toBe('run `echo $1 $2` for \\$5');
    expect(escapePriceDollars('a ``x ` $1`` b $2', MAX)).toBe('a ``x ` $1`` b \\$2');
    expect(escapePriceDollars('```sh\necho $1\n```\ncost $9\n~~~\n$0\n~~~', MAX)).toBe(
      '```sh\necho $1\n```\ncost \\$9\n~~~\n$0\n~~~',
    );
    expect(escapePriceDollars('already \\$5; area $x^2 + y^2$', MAX)).toBe('already \\$5; area $x^2 + y^2$');
    // An unclosed backtick is text: the price after it is still escaped.
    expect(escapePriceDollars('a ` then $4', MAX)).toBe('a ` then \\$4');
  });

  it('leaves a part as it was when the escapes would take it past the limit', () => {
    const text = '$1 '.repeat(10);
    expect(escapePriceDollars(text, text.length + 5)).toBe(text);
    expect(escapePriceDollars(text, text.length + 10)).toBe(text.replaceAll('$1', '\\$1'));
  });
});
