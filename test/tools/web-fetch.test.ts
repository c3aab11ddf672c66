import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createWebFetchTool, webFetchTool } from '../../src/tools/builtins/web-fetch.js';
import { addressRefusal, type Resolver } from '../../src/tools/ssrf.js';
import { startWebServer, type WebServer } from '../emulators/web.js';
import { makeContext, type TestContext } from './context.js';

let a: WebServer;
let b: WebServer;
let ctx: TestContext;
beforeAll(async () => {
  a = await startWebServer();
  b = await startWebServer();
});
afterAll(async () => {
  await a.close();
  await b.close();
});
beforeEach(async () => {
  ctx = await makeContext({
    config: { tools: { web_fetch_max_bytes: 50_000, web_fetch_timeout_seconds: 2 } },
    complete: (p) => (p.includes('The answer is 42') ? 'It is 42.' : 'not found'),
  });
  a.requests.length = 0;
  b.requests.length = 0;
});
afterEach(async () => {
  await ctx.close();
});

// The test resolver maps public-looking names to loopback; only server A's port is allowed to
// stand in for a public host, so everything else on loopback must still be refused.
const resolver: Resolver = async (host) => {
  if (host === 'public.example' || host === 'other.example') return [{ address: '127.0.0.1', family: 4 }];
  if (host === 'mixed.example')
    return [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.5', family: 4 },
    ];
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
};
const tool = () =>
  createWebFetchTool({ resolver, allowException: (ip, port) => ip === '127.0.0.1' && port === a.port });
const pub = (p: string) => `http://public.example:${a.port}${p}`;

describe('web_fetch', () => {
  it('fetches a page and turns HTML into readable text', async () => {
    const r = await ctx.run(tool(), { url: pub('/page.html') });
    expect(r.status).toBeUndefined();
    expect(r.output).toContain('# Test Page');
    expect(r.output).toContain('Welcome');
    expect(r.output).toContain('The answer is 42.');
    expect(r.output).toMatch(/\* first item/);
    expect(r.output).toContain(`Read the docs [http://public.example:${a.port}/docs]`);
    expect(r.output).not.toContain('do not show');
    expect(r.output).not.toContain('color:red');
    expect(a.requests[0]?.headers.host).toBe(`public.example:${a.port}`);
  });

  it('answers a question from the page with the model', async () => {
    const r = await ctx.run(tool(), { url: pub('/page.html'), question: 'What is the answer?' });
    expect(r.output).toContain('It is 42.');
    expect(r.output).toContain(`Source: ${pub('/page.html')}`);
    expect(ctx.completions[0]).toContain('Question: What is the answer?');
  });

  it('decodes charsets, caps size, refuses binary types, reports HTTP errors', async () => {
    expect((await ctx.run(tool(), { url: pub('/latin1') })).output).toContain('café');
    const big = await ctx.run(tool(), { url: pub('/big?n=200000') });
    expect(big.output).toContain('[page cut at 48.8 KB]');
    const gz = await ctx.run(tool(), { url: pub('/gzip') });
    expect(gz.output).toContain('compressed zzzzzzzzzz');
    // A small compressed body that inflates past the cap is cut at the cap.
    const bomb = await ctx.run(tool(), { url: pub('/gzip?n=5000000') });
    expect(bomb.output).toContain('[page cut at 48.8 KB]');
    const img = await ctx.run(tool(), { url: pub('/image.png') });
    expect(img.status).toBe('failed');
    expect(img.output).toContain('content type image/png is not text');
    const missing = await ctx.run(tool(), { url: pub('/missing') });
    expect(missing.status).toBe('failed');
    expect(missing.output).toContain('HTTP 404');
  });

  it('follows redirects within the limit and refuses more than 5', async () => {
    const ok = await ctx.run(tool(), { url: pub('/redirect?to=/text') });
    expect(ok.output).toContain('plain text body');
    expect(ok.output).toContain('after 1 redirect');
    const loop = await ctx.run(tool(), { url: pub('/loop') });
    expect(loop.status).toBe('failed');
    expect(loop.output).toContain('too many redirects');
    expect(a.requests.filter((r) => r.path.startsWith('/loop'))).toHaveLength(6);
  });

  it('refuses loopback, private, link-local, metadata and numeric tricks without connecting', async () => {
    const urls = [
      `http://127.0.0.1:${b.port}/text`,
      `http://[::1]:${b.port}/text`,
      'http://169.254.169.254/latest/meta-data/',
      `http://0x7f000001:${b.port}/text`,
      `http://2130706433:${b.port}/text`,
      `http://0177.0.0.1:${b.port}/text`,
      `http://[::ffff:127.0.0.1]:${b.port}/text`,
      'http://10.0.0.1/',
      'http://192.168.1.1/',
      'http://[fd00::1]/',
      'http://[fe80::1]/',
      'http://100.64.0.1/',
      'http://0.0.0.0/',
    ];
    for (const url of urls) {
      const r = await ctx.run(webFetchTool, { url });
      expect(r.status, url).toBe('failed');
      expect(r.output, url).toMatch(/^refused /);
    }
    expect(b.requests).toHaveLength(0);
  });

  it('refuses names that resolve to a private address (any of them)', async () => {
    const local = await ctx.run(webFetchTool, { url: `http://localhost:${b.port}/text` });
    expect(local.output).toMatch(/refused localhost:\d+: 127\.0\.0\.1 is not a public address \(loopback\)|::1/);
    const mixed = await ctx.run(tool(), { url: 'http://mixed.example/' });
    expect(mixed.output).toContain('10.0.0.5 is not a public address (private)');
    expect(b.requests).toHaveLength(0);
  });

  it('refuses a redirect from a public-looking host to loopback', async () => {
    const direct = await ctx.run(tool(), {
      url: pub(`/redirect?to=${encodeURIComponent(`http://127.0.0.1:${b.port}/text`)}`),
    });
    expect(direct.status).toBe('failed');
    expect(direct.output).toContain(`refused 127.0.0.1:${b.port}: 127.0.0.1 is not a public address (loopback)`);
    const viaName = await ctx.run(tool(), {
      url: pub(`/redirect?to=${encodeURIComponent(`http://other.example:${b.port}/text`)}`),
    });
    expect(viaName.status).toBe('failed');
    expect(viaName.output).toContain('not a public address (loopback)');
    const metadata = await ctx.run(tool(), {
      url: pub(`/redirect?to=${encodeURIComponent('http://169.254.169.254/latest/')}`),
    });
    expect(metadata.output).toContain('cloud metadata');
    expect(a.requests.filter((r) => r.path.startsWith('/redirect'))).toHaveLength(3);
    expect(b.requests).toHaveLength(0);
  });

  it('refuses other schemes and bad URLs, and times out', async () => {
    for (const url of ['file:///etc/passwd', 'ftp://example.com/', 'gopher://x/', 'not a url']) {
      const r = await ctx.run(webFetchTool, { url });
      expect(r.status, url).toBe('failed');
    }
    const slow = await ctx.run(tool(), { url: pub('/slow') });
    expect(slow.status).toBe('failed');
    expect(slow.output).toContain('timed out after 2 s');
  });

  it('classifies addresses', () => {
    expect(addressRefusal('8.8.8.8')).toBeNull();
    expect(addressRefusal('2001:4860:4860::8888')).toBeNull();
    for (const ip of [
      '127.0.0.1',
      '::1',
      '169.254.169.254',
      '::ffff:10.0.0.1',
      '64:ff9b::7f00:1',
      '2002:7f00:1::1',
      '224.0.0.1',
      'fd00:ec2::254',
    ]) {
      expect(addressRefusal(ip), ip).not.toBeNull();
    }
  });
});
