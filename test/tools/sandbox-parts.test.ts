/**
 * The pure parts of the shell sandbox's network and limits: which rules a namespace gets, how
 * the limits bind with and without a cgroup, how cgroup mounts are read, and what the network
 * mode is without bubblewrap or on purpose `host`. The real thing is tried in test/security/.
 */
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config.js';
import { type CgroupSupport, cgroupMounts, ownCgroups } from '../../src/tools/cgroups.js';
import { namespaceSetup, REFUSED_RANGES, SLIRP } from '../../src/tools/netns.js';
import { limitPlan, runsAsRoot } from '../../src/tools/sandbox-limits.js';
import { networkStatus } from '../../src/tools/sandbox-network.js';

const config = (bash: Record<string, unknown> = {}) => configSchema.parse({ tools: { bash } });

describe('namespace rules', () => {
  it('egress: DNS to slirp4netns on port 53 first, then every refused range and host address', () => {
    const lines = namespaceSetup('egress', ['192.0.2.2', '203.0.113.7']);
    expect(lines[0]).toBe('link set lo up');
    expect(lines.slice(1, 3)).toEqual([
      `rule add to ${SLIRP.dns}/32 ipproto udp dport 53 lookup main pref 100`,
      `rule add to ${SLIRP.dns}/32 ipproto tcp dport 53 lookup main pref 100`,
    ]);
    for (const range of ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '100.64.0.0/10'])
      expect(lines).toContain(`rule add to ${range} prohibit pref 200`);
    expect(lines).toContain('rule add to 192.0.2.2/32 prohibit pref 200');
    expect(lines).toContain('rule add to 203.0.113.7/32 prohibit pref 200');
    expect(lines).toHaveLength(3 + REFUSED_RANGES.length + 2);
  });

  it('none: loopback only, nothing to refuse', () => {
    expect(namespaceSetup('none', ['192.0.2.2'])).toEqual(['link set lo up']);
  });
});

describe('how the limits bind', () => {
  const none: CgroupSupport = { version: null, pids: null, memory: null, problems: ['none here'] };
  const both: CgroupSupport = { version: 2, pids: '/sys/fs/cgroup/x', memory: '/sys/fs/cgroup/x', problems: [] };

  it('with cgroups: processes and memory there, files and CPU time as rlimits, no RLIMIT_AS', () => {
    const plan = limitPlan(config(), true, both);
    expect(plan.unbound).toEqual([]);
    expect(plan.rlimits).toContain('--fsize=1073741824');
    expect(plan.rlimits).toContain('--cpu=3600');
    expect(plan.rlimits.some((a) => a.startsWith('--as='))).toBe(false);
    expect(plan.layers).toContain('256 processes (cgroup pids.max)');
    expect(plan.layers).toContain('1024 MiB memory (cgroup)');
  });

  it('without a cgroup: memory as RLIMIT_AS; processes as RLIMIT_NPROC unless root, which it does not bind', () => {
    const plan = limitPlan(config(), true, none);
    expect(plan.rlimits).toContain('--as=1073741824');
    if (runsAsRoot()) {
      expect(plan.unbound).toEqual([
        'processes: not limited (switchboard runs as root, which RLIMIT_NPROC does not bind, and no cgroup can be made here)',
      ]);
      expect(plan.rlimits.some((a) => a.startsWith('--nproc='))).toBe(false);
    } else expect(plan.rlimits).toContain('--nproc=256');
  });

  it('without bubblewrap no RLIMIT_NPROC (it would count every process of the user) and 0 means no limit', () => {
    const plan = limitPlan(config({ max_memory_mb: 0, max_cpu_seconds: 0 }), false, none);
    expect(plan.rlimits).toEqual(['prlimit', '--fsize=1073741824', '--']);
    expect(plan.unbound[0]).toMatch(/^processes: not limited \(without bubblewrap/);
  });
});

describe('cgroup mounts', () => {
  it('reads v1 hierarchies, v2, a mount showing a subtree, and escaped paths', () => {
    const mounts = cgroupMounts(
      [
        '30 25 0:26 / /sys/fs/cgroup/pids rw,relatime shared:12 - cgroup cgroup rw,pids',
        '31 25 0:27 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory',
        '32 25 0:28 / /sys/fs/cgroup/with\\040space rw - cgroup2 cgroup2 rw',
        '33 25 0:29 / /proc rw - proc proc rw',
      ].join('\n'),
    );
    expect(mounts).toEqual([
      { version: 1, controllers: ['rw', 'pids'], root: '/', mountPoint: '/sys/fs/cgroup/pids' },
      { version: 1, controllers: ['rw', 'memory'], root: '/docker/abc', mountPoint: '/sys/fs/cgroup/memory' },
      { version: 2, controllers: [], root: '/', mountPoint: '/sys/fs/cgroup/with space' },
    ]);
  });

  it('reads this process’s cgroup per controller', () => {
    const own = ownCgroups('8:pids:/\n4:memory:/a/b\n2:cpu,cpuacct:/c\n0::/user.slice/x.service\n');
    expect(own.get('pids')).toBe('/');
    expect(own.get('memory')).toBe('/a/b');
    expect(own.get('cpuacct')).toBe('/c');
    expect(own.get('')).toBe('/user.slice/x.service');
  });
});

describe('the network mode', () => {
  it('without bubblewrap the host’s, with a warning', async () => {
    expect(await networkStatus(config(), false)).toMatchObject({
      mode: 'host',
      warn: true,
      detail: expect.stringContaining('without bubblewrap it cannot be isolated'),
    });
  });

  it('"host" only on purpose, with a warning that names what it reaches', async () => {
    expect(await networkStatus(config({ network: 'host' }), true)).toMatchObject({
      mode: 'host',
      warn: true,
      detail: expect.stringContaining('services on its 127.0.0.1'),
    });
  });

  it('refuses a mode it does not know', () => {
    expect(() => config({ network: 'open' })).toThrow();
  });
});
