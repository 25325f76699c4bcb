export { type MainOptions, main, type Output } from './main.ts';
