/**
 * The core as a channel holds it. A channel is built (its surface, listeners and routes wired)
 * before the program starts it, and only `start(core)` hands it the {@link ChannelCore}; what was
 * wired earlier asks this holder, which refuses before the start instead of running half-wired.
 */
import type { ChannelCore } from '../contract/roles.js';
import { SwitchboardError } from '../errors.js';

/** Holds a channel's core from `start(core)` on. */
export class CoreHolder {
  private core: ChannelCore | null = null;

  /** @param channel the channel's name, for the refusal before the start */
  constructor(private readonly channel: string) {}

  /** The channel starts with `core`. */
  set(core: ChannelCore): void {
    this.core = core;
  }

  /**
   * The core.
   * @throws SwitchboardError `channel_not_started` before the channel started.
   */
  get(): ChannelCore {
    if (!this.core) throw new SwitchboardError('channel_not_started', `${this.channel}: channel used before start()`);
    return this.core;
  }

  /** A principal's name as the core's name directory gives it; before the start, the principal itself. */
  nameOf(principal: string | null | undefined): string {
    return this.core ? this.core.names.nameOf(principal) : (principal ?? 'someone');
  }
}
