import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { JsonStateStore, type StoredObject } from './json-state-store.ts';
import { StateInaccessibleError } from './types.ts';

/** What an S3 client needs; credentials omitted means the SDK's default chain. */
export interface S3ConnectionSettings {
  readonly bucket: string;
  readonly region: string;
  /** An S3-compatible endpoint (s3rver, MinIO); switches to path-style addressing. */
  readonly endpoint?: string | undefined;
  readonly credentials?: S3ClientConfig['credentials'] | undefined;
}

/** Builds the S3 client for state settings. */
export function createS3Client(settings: S3ConnectionSettings): S3Client {
  return new S3Client({
    region: settings.region,
    ...(settings.credentials ? { credentials: settings.credentials } : {}),
    ...(settings.endpoint
      ? {
          endpoint: settings.endpoint,
          forcePathStyle: true,
          // S3-compatible servers often lack the SDK's default flexible checksums.
          requestChecksumCalculation: 'WHEN_REQUIRED',
          responseChecksumValidation: 'WHEN_REQUIRED',
        }
      : {}),
  });
}

/** The original's S3-backed state (`reconcile/utils/state.py`). */
export class S3StateStore extends JsonStateStore {
  readonly bucket: string;
  readonly #client: S3Client;
  readonly #pageSize: number | undefined;

  private constructor(
    integration: string,
    bucket: string,
    client: S3Client,
    pageSize: number | undefined,
  ) {
    super(integration);
    this.bucket = bucket;
    this.#client = client;
    this.#pageSize = pageSize;
  }

  /** Opens the store after checking the bucket answers (upstream's `head_bucket`). */
  static async open(options: {
    integration: string;
    bucket: string;
    client: S3Client;
    /** Keys per list request; S3's default (1000) when not given. */
    listPageSize?: number;
  }): Promise<S3StateStore> {
    try {
      await options.client.send(new HeadBucketCommand({ Bucket: options.bucket }));
    } catch (e) {
      throw new StateInaccessibleError(
        `state bucket ${options.bucket} is not accessible: ${describeS3Error(e)}`,
        { cause: e },
      );
    }
    return new S3StateStore(
      options.integration,
      options.bucket,
      options.client,
      options.listPageSize,
    );
  }

  /** Releases the client's sockets. */
  close(): void {
    this.#client.destroy();
  }

  protected async readObject(objectKey: string): Promise<StoredObject | undefined> {
    try {
      const res = await this.#client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: objectKey }),
      );
      const text = (await res.Body?.transformToString('utf-8')) ?? '';
      return { text, metadata: res.Metadata ?? {} };
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw this.#inaccessible('reading', objectKey, e);
    }
  }

  protected async writeObject(objectKey: string, object: StoredObject): Promise<void> {
    try {
      await this.#client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: objectKey,
          Body: object.text,
          Metadata: object.metadata,
        }),
      );
    } catch (e) {
      throw this.#inaccessible('writing', objectKey, e);
    }
  }

  protected async deleteObject(objectKey: string): Promise<void> {
    try {
      await this.#client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: objectKey }));
    } catch (e) {
      throw this.#inaccessible('deleting', objectKey, e);
    }
  }

  protected async listObjectKeys(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    try {
      do {
        const page = await this.#client.send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: prefix,
            ContinuationToken: token,
            MaxKeys: this.#pageSize,
          }),
        );
        for (const item of page.Contents ?? []) if (item.Key) keys.push(item.Key);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    } catch (e) {
      throw this.#inaccessible('listing', prefix, e);
    }
    return keys;
  }

  protected async headObject(
    objectKey: string,
  ): Promise<{ exists: boolean; metadata: Record<string, string> }> {
    try {
      const res = await this.#client.send(
        new HeadObjectCommand({ Bucket: this.bucket, Key: objectKey }),
      );
      return { exists: true, metadata: res.Metadata ?? {} };
    } catch (e) {
      if (isNotFound(e)) return { exists: false, metadata: {} };
      throw this.#inaccessible('reading', objectKey, e);
    }
  }

  #inaccessible(what: string, key: string, e: unknown): StateInaccessibleError {
    return new StateInaccessibleError(
      `${what} s3://${this.bucket}/${key} failed: ${describeS3Error(e)}`,
      { cause: e },
    );
  }
}

function isNotFound(e: unknown): boolean {
  if (!(e instanceof S3ServiceException)) return false;
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata.httpStatusCode === 404;
}

/** The error's S3 name and status, never request details that may carry credentials. */
function describeS3Error(e: unknown): string {
  if (e instanceof S3ServiceException) {
    const status = e.$metadata.httpStatusCode;
    return `${e.name}${status ? ` (HTTP ${status})` : ''}`;
  }
  if (e instanceof Error) {
    const code = (e as NodeJS.ErrnoException).code;
    return code
      ? `${e.name} (${code})`
      : e.name === 'Error'
        ? e.message
        : `${e.name}: ${e.message}`;
  }
  return String(e);
}
