/**
 * What a channel's `health()` reports while its link to the platform comes and goes (Slack's
 * Socket Mode, a gateway): null while connected, else why not. A channel sets it at start and
 * stop, and {@link LinkHealth.watch} lets the SDK client's connection events keep it current.
 */

/** How a connection event changes the health: connected, a problem, or a problem unless one is known already. */
export type LinkEvent = 'up' | { down: string } | { lost: string };

/** Something that emits connection events (a Node `EventEmitter`, an SDK client). */
export interface LinkEvents {
  on(event: string, listener: () => void): unknown;
}

/** A channel's link health (see the module's note). */
export class LinkHealth {
  /** @param problem why the link is not up yet (a channel is "not started" until it is) */
  constructor(public problem: string | null = 'not started') {}

  /** The link works. */
  up(): void {
    this.problem = null;
  }

  /** The link does not work, for this reason. */
  down(why: string): void {
    this.problem = why;
  }

  /** The link was lost: said unless a problem is known already (a reconnect or a stop says more). */
  lost(why: string): void {
    if (this.problem === null) this.problem = why;
  }

  /** Follow `source`'s events, each changing the health as `events` says. */
  watch(source: LinkEvents, events: Record<string, LinkEvent>): void {
    for (const [name, change] of Object.entries(events))
      source.on(name, () => {
        if (change === 'up') this.up();
        else if ('down' in change) this.down(change.down);
        else this.lost(change.lost);
      });
  }
}
