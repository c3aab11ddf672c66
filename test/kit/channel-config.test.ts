/**
 * The value schemas channels' `config.ts` sections share (`src/config-section.ts`, which a
 * channel's configuration imports instead of the kit): an optional text key with its example, and
 * short environment names spelled `<PREFIX>_<KEY>`.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { optionalText } from '../../src/config-section.js';

describe('optionalText', () => {
  it('is an optional string with its description and example', () => {
    const key = optionalText('Setting a bot token enables the channel.', '"xoxb-..."');
    expect(key.parse(undefined)).toBeUndefined();
    expect(key.parse('xoxb-1')).toBe('xoxb-1');
    expect(key.safeParse(42).success).toBe(false);
    expect(key.description).toBe('Setting a bot token enables the channel.');
    expect(z.globalRegistry.get(key)).toMatchObject({ example: '"xoxb-..."' });
  });

  it('shows an empty string as the example of a secret by default', () => {
    expect(z.globalRegistry.get(optionalText('A secret.'))).toMatchObject({ example: '""' });
  });
});
