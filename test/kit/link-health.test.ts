import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { LinkHealth } from '../../src/kit/link-health.js';

describe('LinkHealth', () => {
  it('is "not started" until up, and says why once down', () => {
    const link = new LinkHealth();
    expect(link.problem).toBe('not started');
    link.up();
    expect(link.problem).toBeNull();
    link.down('x: stopped');
    expect(link.problem).toBe('x: stopped');
  });

  it('a lost link keeps a problem already known', () => {
    const link = new LinkHealth(null);
    link.lost('x: disconnected');
    expect(link.problem).toBe('x: disconnected');
    link.down('x: reconnecting');
    link.lost('x: disconnected');
    expect(link.problem).toBe('x: reconnecting');
  });

  it("follows a client's connection events", () => {
    const link = new LinkHealth();
    const client = new EventEmitter();
    link.watch(client, {
      connected: 'up',
      reconnecting: { down: 'x: reconnecting' },
      disconnected: { lost: 'x: lost' },
    });
    client.emit('connected');
    expect(link.problem).toBeNull();
    client.emit('disconnected');
    expect(link.problem).toBe('x: lost');
    client.emit('reconnecting');
    client.emit('disconnected');
    expect(link.problem).toBe('x: reconnecting');
    client.emit('connected');
    expect(link.problem).toBeNull();
  });
});
