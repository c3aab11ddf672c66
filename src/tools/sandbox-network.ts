/**
 * The network of sandboxed commands (`tools.bash.network`): which mode is in force here, and one
 * namespace per conversation (`netns.ts`) that its commands and background processes share — a
 * server started in the background answers a later `curl localhost:PORT` of the same
 * conversation, and no other's. A namespace nobody uses is closed after
 * {@link namespaceTiming}`.idleMs`, and all of them when switchboard closes (or dies: the holder
 * and slirp4netns end with it).
 *
 * Making a namespace takes a few process starts (a few hundred ms on a busy machine), so one is
 * kept ready: the probe's namespace is kept instead of closed, a conversation's first command
 * takes it, and another is made in the background.
 */
import { existsSync } from 'node:fs';
import type { Config } from '../config.js';
import { type HeldNamespace, holdNamespace, type NamespaceKind } from './netns.js';

/** The network mode commands get. */
export type NetworkMode = 'egress' | 'none' | 'host';

/** The network in force for a configuration, in words for `doctor` and the start-up log. */
export interface NetworkStatus {
  setting: Config['tools']['bash']['network'];
  mode: NetworkMode;
  /**
   * Whether a conversation's commands share one namespace; false where none can be held (then
   * each command in `none` mode has a loopback of its own).
   */
  shared: boolean;
  detail: string;
  /** Said at start-up and by `doctor` as a warning. */
  warn: boolean;
}

const probes = new Map<NamespaceKind, Promise<{ ok: boolean; detail: string }>>();

/** A namespace made ahead, for the next conversation that needs one. */
interface Spare {
  ns: Promise<HeldNamespace>;
  idle: NodeJS.Timeout;
}
const spares = new Map<NamespaceKind, Spare>();

/**
 * Make a spare namespace of `kind` now (in the background). Not taken within the idle time, it is
 * closed (it would also miss a host address that came since).
 */
function makeSpare(kind: NamespaceKind): Spare {
  const ns = holdNamespace(kind);
  const spare: Spare = {
    ns,
    idle: setTimeout(() => {
      if (spares.get(kind) !== spare) return;
      spares.delete(kind);
      void ns.then((held) => held.close()).catch(() => {});
    }, namespaceTiming.idleMs),
  };
  spare.idle.unref();
  ns.catch(() => {
    if (spares.get(kind) === spare) spares.delete(kind);
  });
  spares.set(kind, spare);
  return spare;
}

/** The spare namespace of `kind` if there is a live one, and another made in its place; else undefined. */
async function takeSpare(kind: NamespaceKind): Promise<HeldNamespace | undefined> {
  const spare = spares.get(kind);
  if (!spare) return undefined;
  spares.delete(kind);
  clearTimeout(spare.idle);
  const ns = await spare.ns.catch(() => null);
  if (!ns?.alive()) return undefined;
  makeSpare(kind);
  return ns;
}

/**
 * Whether a namespace of `kind` can be made here (probed once, until {@link closeNamespaces}); the
 * one made to find out is kept as the spare.
 */
function probe(kind: NamespaceKind): Promise<{ ok: boolean; detail: string }> {
  let p = probes.get(kind);
  if (!p) {
    p = (async () => {
      if (kind === 'egress' && !existsSync('/dev/net/tun'))
        return { ok: false, detail: 'slirp4netns needs /dev/net/tun, which this system (or container) does not have' };
      try {
        await makeSpare(kind).ns;
        return { ok: true, detail: '' };
      } catch (err) {
        const msg = (err as Error).message;
        return { ok: false, detail: /ENOENT/.test(msg) ? `${msg} (is it installed?)` : msg };
      }
    })();
    probes.set(kind, p);
  }
  return p;
}

const EGRESS =
  'own network namespace per conversation with user-mode networking (slirp4netns): the internet, but not the ' +
  "host's loopback, its own addresses, private (10/8, 172.16/12, 192.168/16, 100.64/10) or link-local " +
  '(169.254/16) addresses; IPv4 only';
const NONE = 'own network namespace per conversation with loopback only: no network beyond it';

/**
 * The network commands get under a configuration.
 * @param inBwrap whether commands run in bubblewrap (without it the network cannot be isolated)
 */
export async function networkStatus(config: Config, inBwrap: boolean): Promise<NetworkStatus> {
  const setting = config.tools.bash.network;
  if (!inBwrap)
    return {
      setting,
      mode: 'host',
      shared: false,
      detail:
        "commands share the host's network (without bubblewrap it cannot be isolated): they reach what the host reaches, services on its 127.0.0.1 included",
      warn: true,
    };
  if (setting === 'host')
    return {
      setting,
      mode: 'host',
      shared: false,
      detail:
        'host (tools.bash.network): commands reach everything the host reaches, services on its 127.0.0.1 (switchboard, the database, MCP servers) included',
      warn: true,
    };
  if (setting === 'egress') {
    const egress = await probe('egress');
    if (egress.ok) return { setting, mode: 'egress', shared: true, detail: `egress: ${EGRESS}`, warn: false };
    const none = await probe('none');
    return {
      setting,
      mode: 'none',
      shared: none.ok,
      detail: `tools.bash.network = "egress" but ${egress.detail}; commands get loopback only ("none")${none.ok ? '' : `, each its own (${none.detail})`}`,
      warn: true,
    };
  }
  const none = await probe('none');
  if (none.ok) return { setting, mode: 'none', shared: true, detail: `none: ${NONE}`, warn: false };
  return {
    setting,
    mode: 'none',
    shared: false,
    detail:
      `none: each command has a loopback of its own (a conversation's namespace cannot be held here: ` +
      `${none.detail}), so a background server does not answer a later command`,
    warn: true,
  };
}

/** How long a namespace nobody uses is kept (a later command of the conversation reuses it). */
export const namespaceTiming = { idleMs: 10 * 60_000 };

interface Entry {
  ns: Promise<HeldNamespace>;
  users: number;
  idle?: NodeJS.Timeout;
}

const held = new Map<string, Entry>();

/** A command's place in its conversation's namespace. */
export interface NamespaceLease {
  /** `nsenter … --` to run the command in the namespace. */
  enter: string[];
  /** The command ended (its processes are gone): the namespace may close once idle. */
  leave(): void;
}

/** Enter the conversation's namespace of `kind`, made now when it does not exist (or its holder died). */
export async function joinNamespace(kind: NamespaceKind, conversationId: string): Promise<NamespaceLease> {
  const key = `${kind}:${conversationId}`;
  let entry = held.get(key);
  if (entry) {
    const ns = await entry.ns.catch(() => null);
    if (!ns?.alive()) {
      if (held.get(key) === entry) held.delete(key);
      entry = undefined;
    }
  }
  if (!entry) {
    const made: Entry = { ns: takeSpare(kind).then((spare) => spare ?? holdNamespace(kind)), users: 0 };
    made.ns.catch(() => {
      if (held.get(key) === made) held.delete(key);
    });
    held.set(key, made);
    entry = made;
  }
  const e = entry;
  e.users++;
  clearTimeout(e.idle);
  let ns: HeldNamespace;
  try {
    ns = await e.ns;
  } catch (err) {
    e.users--;
    throw err;
  }
  let left = false;
  return {
    enter: ns.enter(),
    leave() {
      if (left) return;
      left = true;
      e.users--;
      if (e.users > 0) return;
      clearTimeout(e.idle);
      e.idle = setTimeout(() => {
        if (e.users > 0 || held.get(key) !== e) return;
        held.delete(key);
        void ns.close();
      }, namespaceTiming.idleMs);
      e.idle.unref();
    },
  };
}

/** Namespaces held now, by conversation (for tests and diagnostics). */
export function heldNamespaces(): { kind: NamespaceKind; conversationId: string; users: number }[] {
  return [...held.entries()].map(([key, e]) => {
    const [kind, ...rest] = key.split(':');
    return { kind: kind as NamespaceKind, conversationId: rest.join(':'), users: e.users };
  });
}

/** The holder PIDs of the namespaces made ahead and not taken yet (for tests and diagnostics). */
export async function spareNamespaces(): Promise<{ kind: NamespaceKind; pid: number }[]> {
  const found: { kind: NamespaceKind; pid: number }[] = [];
  for (const [kind, spare] of spares) {
    const ns = await spare.ns.catch(() => null);
    if (ns?.alive()) found.push({ kind, pid: ns.pid });
  }
  return found;
}

/** Close every namespace and the spares (their commands are stopped first); the core calls this on close. */
export async function closeNamespaces(): Promise<void> {
  const entries: { ns: Promise<HeldNamespace>; idle?: NodeJS.Timeout }[] = [...held.values(), ...spares.values()];
  held.clear();
  spares.clear();
  // Probed again when next needed, which makes a spare again.
  probes.clear();
  await Promise.all(
    entries.map(async (e) => {
      clearTimeout(e.idle);
      const ns = await e.ns.catch(() => null);
      await ns?.close();
    }),
  );
}
