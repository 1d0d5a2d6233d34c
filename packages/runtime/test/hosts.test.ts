import request from 'supertest';
import { StatusError } from '@chain/errors';
import { createErrorRenderer } from '../src/error-renderer.js';
import type { Stage } from '../src/exchange.js';
import { expressApplication } from '../src/hosts/express.js';
import { nativeListener } from '../src/hosts/native.js';
import { sendJson } from '../src/respond.js';
import { captureLogger } from './support.js';

/**
 * The two hosts run the same stages the same way: in order; a stage that answers ends the run;
 * a thrown error or a rejection goes to the error renderer; sync stages cost no promise.
 */
const hosts = {
  native: (stages: Stage[]) => nativeListener(stages, createErrorRenderer(captureLogger().logger)),
  express: (stages: Stage[]) =>
    expressApplication({
      outer: stages,
      spec: [],
      end: () => {
        throw new Error('past the last stage');
      },
      renderError: createErrorRenderer(captureLogger().logger),
    }),
};

describe.each(Object.entries(hosts))('the %s host', (_name, host) => {
  it('runs the stages in order, sync and async, until one answers', async () => {
    const seen: string[] = [];
    const app = host([
      (x) => void seen.push(`sync ${x.method} ${x.path}`),
      async () => {
        await Promise.resolve();
        seen.push('async');
      },
      (x) => sendJson(x.res, 200, seen),
      () => void seen.push('never'),
    ]);
    const res = await request(app).get('/a?b=1');
    expect(res.body).toEqual(['sync GET /a', 'async']);
    expect(seen).toEqual(['sync GET /a', 'async']);
  });

  it('stops at a stage that answers asynchronously', async () => {
    const seen: string[] = [];
    const app = host([
      async (x) => {
        await Promise.resolve();
        sendJson(x.res, 201, 'done');
      },
      () => void seen.push('never'),
    ]);
    expect((await request(app).get('/')).status).toBe(201);
    expect(seen).toEqual([]);
  });

  it.each([
    [
      'a thrown StatusError',
      () => {
        throw new StatusError('ERR20001', ['It']);
      },
      404,
    ],
    [
      'a rejected StatusError',
      async () => {
        throw new StatusError('ERR20001', ['It']);
      },
      404,
    ],
    [
      'a thrown Error',
      () => {
        throw new Error('internal');
      },
      500,
    ],
    ['a rejection without a reason', () => Promise.reject(undefined), 500],
  ] as [string, Stage, number][])('renders %s', async (_what, stage, status) => {
    const res = await request(host([stage, (x) => sendJson(x.res, 200, 'not reached')])).get('/');
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.text).not.toMatch(/internal|not reached/);
  });
});
