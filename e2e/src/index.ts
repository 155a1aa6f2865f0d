export { startStack, type Stack, type StackOptions } from './stack.js';
