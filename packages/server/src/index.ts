export { createServer, type HeadwaterServer } from './servers/server.js';
export { resolveConfig, type ServerConfig } from './config/server-config.js';
export { HeadwaterError, errorCodes, type ErrorCode } from './core/errors.js';
