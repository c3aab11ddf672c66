/**
 * The shell sandbox has its own network (`tools.bash.network`). An approved command tried to
 * reach the bot's own HTTP port, a PostgreSQL server on `trust` and every other service on the
 * host's 127.0.0.1 — straight, through slirp4netns's gateway (10.0.2.2) and DNS forwarder
 * (10.0.2.3), and through the host's own addresses — and a private and a link-local address
 * (cloud metadata lives at 169.254.169.254): all refused in `egress` mode, while a non-private
 * address of a stand-in internet answers. The same probe in `host` mode reaches them, so it can
 * see a leak. A background server answers later commands of its conversation and of no other;
 * the command cannot remove the rules; namespaces close when idle and at shutdown, and a
 * switchboard killed with SIGKILL leaves no process behind.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HttpServer } from '../../src/http/server.js';
import { shutdownBackgroundProcesses } from '../../src/tools/background.js';
import { bashTool } from '../../src/tools/builtins/bash.js';
import { SLIRP } from '../../src/tools/netns.js';
import { heldNamespaces, namespaceTiming, networkStatus, spareNamespaces } from '../../src/tools/sandbox-network.js';
import { type NetWorld, netWorldUnavailable, startNetWorld } from '../helpers/net-world.js';
import { skipped } from '../helpers/skips.js';
import { mustHaveSystemTools, skipReason } from '../helpers/system-tools.js';
import { startThrowawayPostgres, type ThrowawayPostgres } from '../helpers/throwaway-postgres.js';
import { makeContext, type TestContext } from '../tools/context.js';

/**
 * `reach HOST PORT`: prints `OPEN HOST:PORT <last line of the answer>` when a TCP connection
 * succeeds (an HTTP GET is sent), `SHUT HOST:PORT <error>` when it does not. Plain bash, so it
 * runs wherever the sandbox does.
 */
const REACH = `reach() {
  local out
  if out=$(timeout 5 bash -c 'exec 3<>"/dev/tcp/$0/$1" || exit 1; printf "GET / HTTP/1.0\\r\\n\\r\\n" >&3; timeout 3 cat <&3; exit 0' "$1" "$2" 2>&1)
  then echo "OPEN $1:$2 $(printf '%s\\n' "$out" | tail -n 1)"
  else echo "SHUT $1:$2 $(printf '%s\\n' "$out" | tail -n 1)"
  fi
}`;

/** The verdict per `host:port` of a command's `reach` lines. */
function verdicts(output: string): Map<string, { open: boolean; last: string }> {
  const found = new Map<string, { open: boolean; last: string }>();
  for (const m of output.matchAll(/^(OPEN|SHUT) (\S+) ?(.*)$/gm))
    found.set(m[2] as string, { open: m[1] === 'OPEN', last: m[3] ?? '' });
  return found;
}

/** The host's own IPv4 addresses, loopback included. */
function hostAddresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .filter((a): a is os.NetworkInterfaceInfo => a?.family === 'IPv4')
    .map((a) => a.address);
}

/** GET http://host:port/ from this process (the host): the body, or the error. */
function getFromHost(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const req = http.get({ host, port, path: '/', timeout: 5000 }, (res) => {
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve(body.trim()));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err) => resolve(`error: ${err.message}`));
  });
}

/** Processes this process started that are a namespace's holder or slirp4netns. */
function namespaceProcesses(): string[] {
  const found: string[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(rest[1]) !== process.pid || rest[0] === 'Z') continue;
      const cmd = readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0');
      if (cmd[0] === 'slirp4netns' || (cmd[0] === 'cat' && readFileSync(`/proc/${e}/comm`, 'utf8').trim() === 'cat'))
        found.push(`${e} ${cmd.join(' ').trim()}`);
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

const contexts: TestContext[] = [];
async function context(conversationId: string, bash: Record<string, unknown> = {}): Promise<TestContext> {
  const ctx = await makeContext({ conversationId, config: { tools: { bash } } });
  contexts.push(ctx);
  return ctx;
}

afterEach(async () => {
  await shutdownBackgroundProcesses();
  for (const ctx of contexts.splice(0)) await ctx.close();
});

const noBwrap = skipReason('bwrap', 'the sandbox’s network is a namespace bubblewrap runs commands in');
const noSlirp = skipReason(
  'slirp4netns',
  'tools.bash.network = "egress" (the default) gives the namespace slirp4netns',
);
const noIp = skipReason('ip', 'iproute2 sets the rules of the sandbox’s network namespace');
const noNet = noBwrap ?? noSlirp ?? noIp;
const notRoot =
  process.getuid?.() !== 0 ? 'this process is not root: the tests above already run the sandbox as a user' : undefined;

describe.skipIf(noNet !== undefined)(`the sandbox's network (egress)${skipped(noNet)}`, () => {
  const token = Math.random().toString(36).slice(2);
  const log = pino({ level: 'silent' });
  const loopbackBot = new HttpServer(log);
  const everywhereBot = new HttpServer(log);
  let loopbackPort = 0;
  let everywherePort = 0;

  beforeAll(async () => {
    for (const s of [loopbackBot, everywhereBot]) s.route('/', (_req, res) => void res.end(`bot ${token}\n`));
    // The bot's port as a loopback-only install has it, and as the 0.0.0.0 default has it.
    loopbackPort = await loopbackBot.listen(0, '127.0.0.1');
    everywherePort = await everywhereBot.listen(0, '0.0.0.0');
  });
  afterAll(async () => {
    await loopbackBot.close();
    await everywhereBot.close();
  });

  /** Every way a command could reach a service on the host's loopback or the host's addresses. */
  function hostTargets(): [string, number][] {
    const targets: [string, number][] = [
      ['127.0.0.1', loopbackPort],
      ['127.0.0.1', everywherePort],
      [SLIRP.gateway, loopbackPort],
      [SLIRP.gateway, everywherePort],
      [SLIRP.dns, loopbackPort],
      [SLIRP.dns, everywherePort],
    ];
    for (const addr of hostAddresses()) targets.push([addr, everywherePort]);
    return targets;
  }

  it('is the mode in force', async () => {
    const ctx = await context('net-mode');
    expect(await networkStatus(ctx.config, true)).toMatchObject({ mode: 'egress', shared: true, warn: false });
  });

  it('a conversation’s first command takes the namespace made ahead, and another is made for the next', async () => {
    const ctx = await context('net-spare');
    await networkStatus(ctx.config, true);
    const [ahead] = await spareNamespaces();
    expect(ahead?.kind).toBe('egress');
    const r = await ctx.run(bashTool, { command: 'ip -br addr show tap0' });
    expect(r.output).toContain(SLIRP.guest);
    // The command ran in the namespace made ahead (its holder's namespace is the command's).
    const inode = (pid: number) => readlinkSync(`/proc/${pid}/ns/net`);
    expect(heldNamespaces().map((n) => n.conversationId)).toContain('net-spare');
    const after = await spareNamespaces();
    expect(after).toHaveLength(1);
    expect(after[0]?.pid).not.toBe(ahead?.pid);
    const inside = await ctx.run(bashTool, { command: 'readlink /proc/self/ns/net' });
    expect(inside.output).toContain(inode(ahead?.pid as number));
  });

  it("reaches nothing of the host: the bot's port on 127.0.0.1, through slirp's gateway and DNS, or the host's own addresses", async () => {
    // From the host both answer: what the sandbox gets below is the sandbox's doing.
    expect(await getFromHost('127.0.0.1', loopbackPort)).toBe(`bot ${token}`);
    for (const addr of hostAddresses()) expect(await getFromHost(addr, everywherePort)).toBe(`bot ${token}`);
    const ctx = await context('net-host');
    const targets = hostTargets();
    const r = await ctx.run(bashTool, {
      command: [
        REACH,
        ...targets.map(([h, p]) => `reach ${h} ${p}`),
        'cat /etc/resolv.conf',
        '[ -e /proc/$$/fd/3 ] && echo "fd 3 open" || echo "fd 3 closed"',
      ].join('\n'),
    });
    const seen = verdicts(r.output);
    expect(seen.size).toBe(new Set(targets.map(([h, p]) => `${h}:${p}`)).size);
    for (const [where, v] of seen) expect(v.open, `${where}: ${v.last}`).toBe(false);
    expect(r.output).not.toContain(token);
    // DNS goes to slirp4netns's forwarder (the host's resolver may be on an address it refuses).
    expect(r.output).toContain(`nameserver ${SLIRP.dns}`);
    // bubblewrap read the file from fd 3 and closed it: the command has no way back to switchboard.
    expect(r.output).toContain('fd 3 closed');
  });

  it('the same probe with tools.bash.network = "host" reaches the bot: the probe sees a leak', async () => {
    const ctx = await context('net-leak', { network: 'host' });
    const r = await ctx.run(bashTool, { command: `${REACH}\nreach 127.0.0.1 ${loopbackPort}` });
    expect(verdicts(r.output).get(`127.0.0.1:${loopbackPort}`)).toEqual({ open: true, last: `bot ${token}` });
  });

  it('cannot remove the rules or configure the namespace: it has no capability there', async () => {
    const ctx = await context('net-rules');
    const r = await ctx.run(bashTool, {
      command: [
        REACH,
        'ip rule flush 2>&1 | head -1',
        'ip rule del pref 200 2>&1 | head -1',
        `ip addr add 10.0.2.50/24 dev tap0 2>&1 | head -1`,
        'unshare -Urn true 2>&1 | head -1; echo "unshare exit $?"',
        `reach ${SLIRP.gateway} ${everywherePort}`,
      ].join('\n'),
    });
    expect(r.output.match(/Operation not permitted/g)?.length ?? 0).toBeGreaterThanOrEqual(3);
    expect(verdicts(r.output).get(`${SLIRP.gateway}:${everywherePort}`)?.open).toBe(false);
  });

  it('a background server answers later commands of its conversation, not those of another or the host', async () => {
    const port = 30_000 + Math.floor(Math.random() * 10_000);
    const a = await context('net-conv-a');
    const b = await context('net-conv-b');
    // Perl, not the test's Node: a Node from the registry lives in a folder the sandbox does not
    // show. It reads the request before it answers (closing on unread bytes resets the connection).
    const server = `perl -MIO::Socket::INET -e 'alarm 60; my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => ${port}, Listen => 5, ReuseAddr => 1) or die "listen: $!"; while (my $c = $s->accept) { while (my $l = <$c>) { last if $l =~ /^\\r?$/ } print $c "from-a\\n"; close $c }'`;
    const started = await a.run(bashTool, { command: `exec ${server}`, background: true });
    expect(started.output).toMatch(/Started background process/);
    let fromA = '';
    for (let i = 0; i < 50 && !fromA.includes('OPEN'); i++) {
      fromA = (await a.run(bashTool, { command: `${REACH}\nreach 127.0.0.1 ${port}` })).output;
      if (!fromA.includes('OPEN')) await new Promise((r) => setTimeout(r, 100));
    }
    expect(verdicts(fromA).get(`127.0.0.1:${port}`)).toEqual({ open: true, last: 'from-a' });
    const fromB = await b.run(bashTool, { command: `${REACH}\nreach 127.0.0.1 ${port}` });
    expect(verdicts(fromB.output).get(`127.0.0.1:${port}`)?.open).toBe(false);
    expect(await getFromHost('127.0.0.1', port)).toMatch(/^error:/);
    expect(heldNamespaces().map((n) => n.conversationId)).toEqual(expect.arrayContaining(['net-conv-a', 'net-conv-b']));
  });

  it('closes a namespace nobody uses, and all of them at shutdown, leaving no process', async () => {
    const saved = namespaceTiming.idleMs;
    namespaceTiming.idleMs = 1500;
    try {
      const kept = await context('net-kept');
      await kept.run(bashTool, { command: `exec sleep 30`, background: true });
      const idle = await context('net-idle');
      await idle.run(bashTool, { command: 'true' });
      expect(heldNamespaces().map((n) => n.conversationId)).toEqual(expect.arrayContaining(['net-idle', 'net-kept']));
      // The idle one goes; the one a background process is in stays.
      const until = Date.now() + 10_000;
      while (heldNamespaces().some((n) => n.conversationId === 'net-idle') && Date.now() < until)
        await new Promise((r) => setTimeout(r, 100));
      expect(heldNamespaces().map((n) => n.conversationId)).toEqual(['net-kept']);
      await shutdownBackgroundProcesses();
      expect(heldNamespaces()).toEqual([]);
      expect(namespaceProcesses()).toEqual([]);
    } finally {
      namespaceTiming.idleMs = saved;
    }
  });

  it.skipIf(notRoot !== undefined)(
    `as an unprivileged user, the way the Docker image runs: the same refusals, and no way to remove the rules${skipped(notRoot)}`,
    async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'sb-net-user-'));
      try {
        // The user must be able to get to its workspace (a temp folder is 0700).
        chmodSync(dir, 0o755);
        const ws = path.join(dir, 'ws');
        mkdirSync(ws);
        chownSync(ws, 65534, 65534);
        // A container given `--device /dev/net/tun` has it with mode 0666; a private mount
        // namespace gives the unprivileged user such a node here.
        const tun = path.join(dir, 'tun');
        expect(spawnSync('mknod', [tun, 'c', '10', '200']).status).toBe(0);
        chmodSync(tun, 0o666);
        const targets = hostTargets();
        const command = [
          REACH,
          'id -u',
          'ip rule flush 2>&1 | head -1',
          ...targets.map(([h, p]) => `reach ${h} ${p}`),
          'cat /etc/resolv.conf',
        ].join('\n');
        const child = spawn(
          'unshare',
          [
            '--mount',
            '--propagation',
            'private',
            'sh',
            '-c',
            'mount --bind "$1" /dev/net/tun && shift && exec setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"',
            'sh',
            tun,
            process.execPath,
            path.join(import.meta.dirname, 'run-command.mjs'),
            ws,
            'egress',
            '256',
            command,
          ],
          { env: { PATH: process.env.PATH, HOME: ws }, cwd: ws },
        );
        let out = '';
        child.stdout.on('data', (c) => {
          out += c;
        });
        child.stderr.on('data', (c) => {
          out += c;
        });
        await new Promise((r) => child.on('exit', r));
        const result = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as { uid?: number; output?: string };
        expect(result.uid, out).toBe(65534);
        const output = result.output ?? '';
        expect(output, out).toMatch(/^65534$/m);
        expect(output).toContain('Operation not permitted');
        const seen = verdicts(output);
        expect(seen.size).toBe(new Set(targets.map(([h, p]) => `${h}:${p}`)).size);
        for (const [where, v] of seen) expect(v.open, `${where}: ${v.last}`).toBe(false);
        expect(output).toContain(`nameserver ${SLIRP.dns}`);
      } finally {
        rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
      }
    },
    60_000,
  );

  it('a switchboard killed with SIGKILL leaves no namespace process behind', async () => {
    const dist = path.resolve(import.meta.dirname, '../../dist/src/tools/sandbox-network.js');
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { joinNamespace } = await import(${JSON.stringify(dist)}); const l = await joinNamespace('egress', 'killed'); console.log(l.enter.join(' ')); setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const line = await new Promise<string>((resolve) => child.stdout.once('data', (c) => resolve(String(c))));
    const holder = Number(/\/proc\/(\d+)\/ns\/net/.exec(line)?.[1]);
    const ours = () =>
      readdirSync('/proc')
        .filter((e) => /^\d+$/.test(e))
        .filter((e) => {
          try {
            const cmd = readFileSync(`/proc/${e}/cmdline`, 'utf8');
            return Number(e) === holder || (cmd.startsWith('slirp4netns') && cmd.includes(`\0${holder}\0tap0`));
          } catch {
            return false;
          }
        });
    expect(ours()).toHaveLength(2);
    child.kill('SIGKILL');
    const until = Date.now() + 5000;
    while (ours().length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(ours()).toEqual([]);
  });
});

const noPg = skipReason(
  'postgres',
  'a throw-away PostgreSQL on trust stands for the database the sandbox must not reach',
);

describe.skipIf(noNet !== undefined || noPg !== undefined)(
  `the sandbox's network and a PostgreSQL on trust${skipped(noNet ?? noPg)}`,
  () => {
    let pg: ThrowawayPostgres;
    beforeAll(async () => {
      pg = await startThrowawayPostgres();
    }, 60_000);
    afterAll(() => pg?.close());

    it('psql from the host gets in; from an approved command, by no address', async () => {
      const psql = `${pg.bin}/psql`;
      const sql = "select 'IN-' || current_user";
      const host = spawnSync(psql, ['-h', '127.0.0.1', '-p', String(pg.port), '-U', 'postgres', '-tAc', sql], {
        encoding: 'utf8',
      });
      expect(host.stdout.trim()).toBe('IN-postgres');
      const ctx = await context('net-pg');
      const via = ['127.0.0.1', SLIRP.gateway, SLIRP.dns, ...hostAddresses()];
      const r = await ctx.run(bashTool, {
        command: [
          REACH,
          ...via.map((h) => `reach ${h} ${pg.port}`),
          ...via.map(
            (h) => `PGCONNECT_TIMEOUT=5 ${psql} -h ${h} -p ${pg.port} -U postgres -tAc "${sql}" 2>&1 | tail -n 1`,
          ),
        ].join('\n'),
      });
      for (const [where, v] of verdicts(r.output)) expect(v.open, `${where}: ${v.last}`).toBe(false);
      expect(verdicts(r.output).size).toBe(new Set(via).size);
      expect(r.output).not.toContain('IN-postgres');
    });
  },
);

const noWorld = netWorldUnavailable();
if (noWorld !== undefined && mustHaveSystemTools && noNet === undefined)
  it('CI can build the test’s own network', () => {
    throw new Error(`${noWorld} — CI runs the sandbox's network tests with it`);
  });

describe.skipIf(noNet !== undefined || noWorld !== undefined)(
  `the sandbox's network and a stand-in internet${skipped(noNet ?? noWorld)}`,
  () => {
    let world: NetWorld;
    beforeAll(async () => {
      world = await startNetWorld();
    }, 60_000);
    afterAll(async () => {
      await world?.close();
    });

    it('reaches a non-private address through user-mode networking; a private and a link-local one are refused', async () => {
      // From the host all three answer.
      for (const addr of [world.internet, world.private, world.linkLocal])
        expect(await getFromHost(addr, world.port)).toBe(world.answer);
      const ctx = await context('net-world');
      const r = await ctx.run(bashTool, {
        command: [
          REACH,
          ...[world.internet, world.private, world.linkLocal].map((h) => `reach ${h} ${world.port}`),
        ].join('\n'),
      });
      const seen = verdicts(r.output);
      expect(seen.get(`${world.internet}:${world.port}`)).toEqual({ open: true, last: world.answer });
      expect(seen.get(`${world.private}:${world.port}`)?.open).toBe(false);
      expect(seen.get(`${world.linkLocal}:${world.port}`)?.open).toBe(false);
      expect(seen.get(`${world.private}:${world.port}`)?.last).toMatch(/Permission denied/);
    });

    it('"none" reaches nothing at all, not even the non-private address', async () => {
      const ctx = await context('net-none', { network: 'none' });
      expect(await networkStatus(ctx.config, true)).toMatchObject({ mode: 'none', shared: true });
      const r = await ctx.run(bashTool, { command: `${REACH}\nreach ${world.internet} ${world.port}` });
      expect(verdicts(r.output).get(`${world.internet}:${world.port}`)?.open).toBe(false);
    });
  },
);
