export { startStack, type Stack, type StackOptions } from './stack.js';
export { startComponentProcess, type ComponentProcess, type Role, type Service } from './components.js';
export { GATEWAY_COMPONENTS, startLocalGateway, type LocalGateway, type LocalGatewayOptions } from './localGateway.js';
