/**
 * The web chat's declaration (see `../kind.ts`): on unless `web.enabled = false`. Its users are
 * made by the operator's login links, so they are let in without pairing (rate limited like any
 * remote user). A user is an admin while one of their sessions made from an `--admin` link lives.
 */
import { hasLiveAdminSession } from '../../kit/index.js';
import type { ChannelKind } from '../../kit/index.js';
import { webConfig } from './config.js';

/** The web chat. */
export const webKind: ChannelKind = {
  name: 'web',
  config: webConfig,
  howToEnable: 'set web.enabled = true',
  signedIn: true,
  configured: (config) => config.web.enabled,
  // An admin while a session made from an `--admin` link is live; `web revoke` ends it everywhere.
  isAdmin: (db, user) => hasLiveAdminSession(db, user, Date.now()),
  // `switchboard web link|sessions|revoke`: login links and sessions, straight on the database.
  async cli(config, sub, arg, flags) {
    const { webCommand } = await import('./cli.js');
    const text = (name: string) => (typeof flags[name] === 'string' ? (flags[name] as string) : undefined);
    const user = text('user');
    const ttl = text('ttl');
    return webCommand(config, sub, arg, {
      ...(user !== undefined ? { user } : {}),
      admin: flags.admin === true,
      ...(ttl !== undefined ? { ttl } : {}),
    });
  },
  async create(options) {
    const { WebChannel } = await import('./index.js');
    return new WebChannel({ ...options, log: options.log.child({ channel: 'web' }) });
  },
};
