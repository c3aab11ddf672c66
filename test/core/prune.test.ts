import { afterEach, describe, expect, it } from 'vitest';
import { startHarness, waitFor, type Harness } from '../helpers/harness.js';

let h: Harness;
afterEach(async () => {
  await h.close();
});

describe('housekeeping', () => {
  it('forgets week-old inbound keys and expired pairing codes, keeps the rest', async () => {
    h = await startHarness({ tools: [] });
    const old = Date.now() - 8 * 24 * 3600_000;
    await h.core.db
      .insertInto('inbound_keys')
      .values([
        { key: 'telegram:update:1', created_at: old },
        { key: 'telegram:update:2', created_at: Date.now() },
      ])
      .execute();
    const code = (expires: number, c: string) => ({
      code: c,
      channel: 'telegram',
      user_id: c,
      display_name: 'x',
      chat_key: '1',
      status: 'pending' as const,
      created_at: old,
      expires_at: expires,
    });
    await h.core.db
      .insertInto('pairing_codes')
      .values([code(old, 'AAAAAA'), code(Date.now() + 60_000, 'BBBBBB')])
      .execute();
    await h.restart(); // the first sweep of a new core prunes
    // The sweep prunes keys, then codes, in separate statements: wait until both are done.
    const { keys, codes } = await waitFor(async () => {
      const keys = await h.core.db.selectFrom('inbound_keys').select('key').execute();
      const codes = await h.core.db.selectFrom('pairing_codes').select('code').execute();
      return keys.length === 1 && codes.length === 1 ? { keys, codes } : undefined;
    }, 'pruned keys and codes');
    expect(keys.map((k) => k.key)).toEqual(['telegram:update:2']);
    expect(codes.map((c) => c.code)).toEqual(['BBBBBB']);
    // A duplicate of the kept key is still recognised.
    expect(await h.core.markInboundSeen('telegram:update:2')).toBe(false);
  });
});
