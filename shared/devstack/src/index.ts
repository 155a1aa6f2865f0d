export * from './freePort.js';
export * from './findExecutable.js';
export * from './redisServer.js';
export * from './kubo.js';
export * from './webhookReceiver.js';
export * from './processes.js';
export * from './jsonCall.js';
export * from './otlpReceiver.js';
