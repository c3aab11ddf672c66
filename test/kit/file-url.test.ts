import { describe, expect, it } from 'vitest';
import { isPlatformFileUrl } from '../../src/kit/file-url.js';

const slack = (apiUrl?: string) => ({ domain: 'slack.com', apiUrl });

describe('isPlatformFileUrl', () => {
  it("takes the platform's domain and its subdomains over HTTPS only", () => {
    expect(isPlatformFileUrl('https://files.slack.com/files-pri/T1-F1/a.txt', slack())).toBe(true);
    expect(isPlatformFileUrl('https://slack.com/a.txt', slack())).toBe(true);
    expect(isPlatformFileUrl('http://files.slack.com/files-pri/T1-F1/a.txt', slack())).toBe(false);
  });

  it('refuses look-alike hosts and paths', () => {
    expect(isPlatformFileUrl('https://evil.example/slack.com/a.txt', slack())).toBe(false);
    expect(isPlatformFileUrl('https://slack.com.evil.example/a.txt', slack())).toBe(false);
    expect(isPlatformFileUrl('https://notslack.com/a.txt', slack())).toBe(false);
  });

  it("takes the configured API root's host (port included), over HTTP too", () => {
    expect(isPlatformFileUrl('http://127.0.0.1:9000/files/F1/a', slack('http://127.0.0.1:9000/api/'))).toBe(true);
    expect(isPlatformFileUrl('http://127.0.0.1:9001/files/F1/a', slack('http://127.0.0.1:9000/api/'))).toBe(false);
    expect(isPlatformFileUrl('http://127.0.0.1:9000/files/F1/a', slack('not a url'))).toBe(false);
  });

  it('refuses other schemes and what is not a URL', () => {
    expect(isPlatformFileUrl('file:///etc/passwd', slack('http://127.0.0.1:9000/api/'))).toBe(false);
    expect(isPlatformFileUrl('not a url', slack())).toBe(false);
  });
});
