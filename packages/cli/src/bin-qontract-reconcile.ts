import { main } from './main.ts';

export default main;
