import { createLogger } from '../src/index.js';
import { captureLogLines as capture } from './support/logLines.js';

describe('logging', () => {
  it('writes JSON with the component, level label and child bindings', () => {
    const { stream, lines } = capture();
    const logger = createLogger({ component: 'account-api', level: 'info', pretty: false, destination: stream });
    logger.child({ requestId: 'r-1' }).info({ status: 200 }, 'request');
    logger.debug('hidden below the level');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      component: 'account-api',
      level: 'info',
      requestId: 'r-1',
      status: 200,
      msg: 'request',
    });
  });

  it('redacts secret keys and scrubs secret values wherever they appear', () => {
    const { stream, lines } = capture();
    const logger = createLogger({
      component: 'x',
      level: 'info',
      pretty: false,
      destination: stream,
      secrets: ['hunter22'],
    });
    logger.info({ password: 'p', req: { headers: { authorization: 'Basic abc' } } }, 'login');
    logger.error({ err: new Error('cannot reach redis://:hunter22@redis:6379') }, 'connect failed hunter22');
    const text = JSON.stringify(lines);
    expect(text).not.toContain('hunter22');
    expect(text).not.toContain('Basic abc');
    expect(lines[0]).toMatchObject({ password: '[redacted]' });
    expect(text).toContain('redis://:[redacted]@redis:6379');
  });
});
