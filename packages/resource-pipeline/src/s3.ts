import type { S3Client } from '@aws-sdk/client-s3';
import { gqlClient } from '@qontract/app-interface';
import { QontractError, type RunContext } from '@qontract/core';
import { AwsAccountsDocument } from './aws-accounts.generated.ts';

export interface S3Helpers {
  s3(account: string, bucket: string, path: string, region: string | undefined): Promise<string>;
  s3Ls(
    account: string,
    bucket: string,
    path: string,
    region: string | undefined,
  ): Promise<string[]>;
}

/**
 * The `s3()` and `s3_ls()` template helpers: objects of a bucket read with the
 * automation credentials (`aws_access_key_id`, `aws_secret_access_key`) of the
 * app-interface AWS account named in the call; the region defaults to the
 * account's `resourcesDefaultRegion`. `AWS_ENDPOINT_URL_S3` (the AWS SDK's own
 * variable, passed through the run's environment) points at an S3-compatible
 * server. The AWS SDK is loaded on first use.
 */
export function s3Helpers(ctx: RunContext): S3Helpers {
  const clients = new Map<string, Promise<S3Client>>();
  const clientFor = (account: string, region: string | undefined) => {
    const key = `${account}\u0000${region ?? ''}`;
    let client = clients.get(key);
    if (!client) {
      client = (async () => {
        const gql = await ctx.client(gqlClient);
        const { accounts } = await gql.query(AwsAccountsDocument);
        const acct = (accounts ?? []).find((a) => a.name === account);
        if (!acct) throw new QontractError(`s3(): unknown AWS account '${account}'`);
        const secret = await ctx.secrets.readAll(acct.automationToken);
        const accessKeyId = secret.aws_access_key_id;
        const secretAccessKey = secret.aws_secret_access_key;
        if (!accessKeyId || !secretAccessKey) {
          throw new QontractError(
            `s3(): the automation token of AWS account '${account}' has no access keys`,
          );
        }
        const { S3Client } = await import('@aws-sdk/client-s3');
        const endpoint = ctx.env.vars.AWS_ENDPOINT_URL_S3;
        return new S3Client({
          region: region || acct.resourcesDefaultRegion,
          credentials: { accessKeyId, secretAccessKey },
          ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
        });
      })();
      clients.set(key, client);
    }
    return client;
  };
  const failed = (what: string, e: unknown): never => {
    if (e instanceof QontractError) throw e;
    const name = (e as { name?: string }).name ?? 'error';
    throw new QontractError(`${what}: ${name}`);
  };
  return {
    async s3(account, bucket, path, region) {
      const { GetObjectCommand } = await import('@aws-sdk/client-s3');
      try {
        const out = await (await clientFor(account, region)).send(
          new GetObjectCommand({ Bucket: bucket, Key: path }),
        );
        return (await out.Body?.transformToString('utf-8')) ?? '';
      } catch (e) {
        return failed(`s3(): cannot read s3://${bucket}/${path}`, e);
      }
    },
    async s3Ls(account, bucket, path, region) {
      const { ListObjectsV2Command } = await import('@aws-sdk/client-s3');
      const keys: string[] = [];
      try {
        const client = await clientFor(account, region);
        let token: string | undefined;
        do {
          const page = await client.send(
            new ListObjectsV2Command({ Bucket: bucket, Prefix: path, ContinuationToken: token }),
          );
          for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key);
          token = page.IsTruncated ? page.NextContinuationToken : undefined;
        } while (token);
      } catch (e) {
        return failed(`s3_ls(): cannot list s3://${bucket}/${path}`, e);
      }
      return keys;
    },
  };
}
