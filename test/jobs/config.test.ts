import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('[jobs] configuration', () => {
  it('has defaults, takes SWITCHBOARD__JOBS__* and SWITCHBOARD_API_TOKEN, and refuses bad values by name', () => {
    expect(loadConfig({ env: {} }).jobs).toEqual({
      missed: 'run_once',
      concurrency: 4,
      approval_timeout_seconds: 3600,
      missed_grace_seconds: 60,
      resync_seconds: 30,
    });
    const c = loadConfig({
      env: {
        SWITCHBOARD__JOBS__MISSED: 'skip',
        SWITCHBOARD__JOBS__TIMEZONE: 'Europe/Berlin',
        SWITCHBOARD_API_TOKEN: 'tok',
      },
    });
    expect([c.jobs.missed, c.jobs.timezone, c.http.api_token]).toEqual(['skip', 'Europe/Berlin', 'tok']);
    expect(() => loadConfig({ env: { SWITCHBOARD__JOBS__TIMEZONE: 'Mars/Base' } })).toThrow(
      new ConfigError(
        'config: jobs.timezone (env SWITCHBOARD__JOBS__TIMEZONE): not an IANA time zone (e.g. Europe/Berlin)',
      ),
    );
    expect(() => loadConfig({ env: { SWITCHBOARD__JOBS__MISSED: 'always' } })).toThrow(/^config: jobs\.missed/);
    expect(() => loadConfig({ env: { SWITCHBOARD__JOBS__CONCURRENCY: '0' } })).toThrow(/^config: jobs\.concurrency/);
  });
});
