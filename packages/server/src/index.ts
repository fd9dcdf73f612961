export { createServer, type HeadwaterServer } from './server.js';
export { resolveConfig, type ServerConfig } from './config.js';
export { HeadwaterError, errorCodes, type ErrorCode } from './errors.js';
