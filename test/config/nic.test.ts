/**
 * The network flags: a NIC profile with its overrides, and the combinations a driver does not
 * have refused in one line (exit status 2) that says what to do instead.
 */
import { describe, expect, it } from 'vitest';
import { type PartialConfig, resolveConfig } from '../../src/config/schema.js';
import { DeferlabError } from '../../src/errors.js';
import { NIC_PROFILE } from '../../src/net/profiles.js';

const resolve = (flags: PartialConfig = {}) =>
  resolveConfig({ flags, cwd: process.cwd(), now: new Date(0), random: () => 0.5 });

function problem(flags: PartialConfig): string {
  try {
    resolve(flags);
  } catch (err) {
    if (err instanceof DeferlabError) {
      expect(err.exitStatus).toBe(2);
      expect(err.message).not.toContain('\n');
      return err.message;
    }
    throw err;
  }
  throw new Error('resolved, but should not have');
}

const tcp = (c: ReturnType<typeof resolve>) => {
  if (c.workload.kind !== 'tcp_lat') throw new Error('not tcp_lat');
  return c.workload;
};

describe('--nic and its overrides', () => {
  it("takes the profile's values by default (IPoIB connected mode)", () => {
    const w = tcp(resolve());
    expect(w.nic).toMatchObject({ profile: 'ipoib-cm', mtu: 65520, linkGbps: 32, rxUsecs: 0, rxFrames: 0 });
    expect(w.instances).toBe(1);
  });

  it('applies --mtu, --link-rate, --rx-usecs, --rx-frames and --instances over the profile', () => {
    const w = tcp(
      resolve({ workload: { nic: 'ipoib-ud', mtu: 4092, linkRate: '40G', rxUsecs: 16, rxFrames: 8, instances: 8 } }),
    );
    expect(w.nic).toMatchObject({ profile: 'ipoib-ud', mtu: 4092, linkGbps: 40, rxUsecs: 16, rxFrames: 8 });
    expect(w.instances).toBe(8);
    expect(tcp(resolve({ workload: { nic: 'ixgbe' } })).nic).toMatchObject({ mtu: 1500, linkGbps: 10, rxUsecs: 1 });
  });

  it.each([
    [{ nic: 'e1000' }, /must be one of ipoib-cm, ipoib-ud, ixgbe/],
    [{ nic: 'ixgbe', mtu: 9711 }, /at most 9710, the largest MTU ixgbe takes/],
    [{ nic: 'ipoib-ud', mtu: 9000 }, /at most 4092/],
    [{ mtu: 100 }, /576/],
    [{ nic: 'ixgbe', rxFrames: 64 }, /ixgbe moderates by interval only/],
    [{ nic: 'ixgbe', rxUsecs: 2000 }, /at most 1022 µs on ixgbe/],
    [{ rxFrames: 64 }, /give a period too/],
    [{ linkRate: 'fast' }, /link rate in Gb\/s/],
    [{ instances: 17 }, /1 to 16|1\.\.16|from 1 to 16/],
  ] as Array<[PartialConfig['workload'], RegExp]>)('refuses %o', (workload, why) => {
    expect(problem({ workload })).toMatch(why);
  });

  it('every profile names where its numbers come from', () => {
    for (const p of Object.values(NIC_PROFILE)) expect(p.sources.length).toBeGreaterThan(80);
  });
});
