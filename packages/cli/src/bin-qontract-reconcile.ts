import { main } from './main.ts';

/** @public Loaded by bin/qontract-reconcile.js through the Node-version launcher. */
export default main;
