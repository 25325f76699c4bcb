// s3rver ships no type declarations; this covers the part the fake S3 helper uses.
declare module 's3rver' {
  import type { Server } from 'node:http';
  import type { AddressInfo } from 'node:net';

  interface S3rverOptions {
    address?: string;
    port?: number;
    silent?: boolean;
    directory?: string;
    resetOnClose?: boolean;
    allowMismatchedSignatures?: boolean;
    vhostBuckets?: boolean;
    configureBuckets?: { name: string; configs?: (string | Buffer)[] }[];
  }

  class S3rver {
    constructor(options?: S3rverOptions);
    /** The Node server `run()` listens with. */
    readonly httpServer: Server;
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
    reset(): void;
  }

  export default S3rver;
}
