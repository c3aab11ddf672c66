/**
 * The web chat's declaration (see `../kind.ts`): on unless `web.enabled = false`. Its users are
 * made by the operator's login links, so they are let in without pairing (rate limited like any
 * remote user).
 */
import type { ChannelKind } from '../kind.js';

/** The web chat. */
export const webKind: ChannelKind = {
  name: 'web',
  howToEnable: 'set web.enabled = true',
  signedIn: true,
  configured: (config) => config.web.enabled,
  async create(options) {
    const { WebChannel } = await import('./index.js');
    return new WebChannel({ ...options, log: options.log.child({ channel: 'web' }) });
  },
};
