/**
 * `GET /metrics` is not public: with `http.api_token` set it needs the bearer token (401 without
 * it, with a wrong one, with another scheme); with no token configured it answers a client on
 * loopback only, and not one a reverse proxy forwarded (the proxy's own connection is loopback).
 * Real servers on 127.0.0.1, real HTTP.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config.js';
import { isLoopbackAddress, metricsRefusal } from '../../src/http/metrics-access.js';
import { type App, startServer } from '../../src/main.js';
import { type ScriptedLlm, startScriptedLlm } from '../emulators/llm.js';
import { testConfig } from '../helpers/harness.js';

const TOKEN = 'metrics-test-token-0123456789';
let llm: ScriptedLlm;
const apps: App[] = [];
const dirs: string[] = [];

async function serve(apiToken?: string): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sb-metrics-'));
  dirs.push(dir);
  mkdirSync(path.join(dir, 'workspace'));
  const app = await startServer(
    testConfig(dir, llm.url, apiToken ? { http: { api_token: apiToken } } : {}),
    pino({ level: 'silent' }),
  );
  if (!app) throw new Error('nothing started');
  apps.push(app);
  return `http://127.0.0.1:${app.port}`;
}

beforeAll(async () => {
  llm = await startScriptedLlm();
});
afterAll(async () => {
  for (const app of apps) await app.close();
  await llm.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

describe('/metrics with http.api_token set', () => {
  let base: string;
  beforeAll(async () => {
    base = await serve(TOKEN);
  });

  it('refuses a request without the token, with a wrong one and with another scheme (401)', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token', `Basic ${TOKEN}`, TOKEN]) {
      const res = await fetch(`${base}/metrics`, { headers: authorization ? { authorization } : {} });
      expect(res.status, String(authorization)).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(await res.text()).not.toContain('switchboard_');
    }
  });

  it('answers with the token', async () => {
    const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('switchboard_');
  });
});

describe('/metrics with no token configured', () => {
  let base: string;
  beforeAll(async () => {
    base = await serve();
  });

  it('answers a loopback client', async () => {
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('switchboard_');
  });

  it('refuses a request a reverse proxy forwarded (403)', async () => {
    for (const header of ['x-forwarded-for', 'forwarded', 'x-real-ip']) {
      const res = await fetch(`${base}/metrics`, { headers: { [header]: '203.0.113.9' } });
      expect(res.status, header).toBe(403);
      expect(await res.text()).toContain('loopback clients only');
    }
  });

  it('refuses a client from another address', () => {
    const from = (remoteAddress: string) => ({ headers: {}, socket: { remoteAddress } }) as http.IncomingMessage;
    expect(metricsRefusal(from('192.0.2.7'), undefined)?.status).toBe(403);
    expect(metricsRefusal(from('::ffff:10.0.0.1'), undefined)?.status).toBe(403);
    expect(metricsRefusal(from('fe80::1'), undefined)?.status).toBe(403);
    expect(metricsRefusal(from('127.0.0.1'), undefined)).toBeNull();
    expect(metricsRefusal(from('::ffff:127.0.0.1'), undefined)).toBeNull();
    expect(metricsRefusal(from('::1'), undefined)).toBeNull();
    expect(isLoopbackAddress(undefined)).toBe(false);
  });
});

describe('http.host', () => {
  it('defaults to loopback', () => {
    expect(configSchema.parse({}).http.host).toBe('127.0.0.1');
  });
});
