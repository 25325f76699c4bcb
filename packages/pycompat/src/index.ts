export { compareCodePoints } from './code-point-order.ts';
